"""/publish: every finding of a refused archive on the form; owner and visibility fields."""

from __future__ import annotations

import io

from django.test import Client
from django.utils.html import escape

from registry import services
from registry.access import Actor
from registry.models import Skill
from skillctl.format import load_archive
from tests.catalog.conftest import make_zip, upload


def test_a_refused_archive_shows_every_finding_code_path_and_message(signed_in):
    bad = make_zip("bad-skill", text="---\nname: Bad Skill\n---\n")
    expected = load_archive(io.BytesIO(bad)).errors
    assert len(expected) >= 2  # the name's pattern and the missing description
    response = signed_in.post("/publish", {"archive": upload(bad)})
    assert response.status_code == 422
    page = response.content.decode()
    for finding in expected:
        assert f"<li><code>{finding.code}</code> {finding.location}: {escape(finding.message)}</li>" in page
    assert not Skill.objects.exists()


def test_the_form_publishes_into_an_org_as_private(signed_in, alice):
    services.org_create(actor=Actor(alice), name="acme")
    form = signed_in.get("/publish").content.decode()
    assert '<option value="acme">acme</option>' in form and '<option value="private">private</option>' in form
    done = signed_in.post(
        "/publish", {"archive": upload(make_zip("acme-tool")), "owner": "acme", "visibility": "private"}
    )
    assert done.status_code == 302 and done["Location"] == "/skills/acme-tool/versions/1.0.0"
    skill = Skill.objects.get(name="acme-tool")
    assert skill.owner.name == "acme" and skill.visibility == "private"
    assert Client().get("/skills/acme-tool").status_code == 404
    assert signed_in.get("/skills/acme-tool").status_code == 200


def test_the_form_refuses_an_owner_the_user_does_not_belong_to(signed_in, alice):
    bob = services.user_create(username="bob")
    services.org_create(actor=Actor(bob), name="bobco")
    response = signed_in.post("/publish", {"archive": upload(make_zip("sneaky")), "owner": "bobco"})
    # The API's answer to the same refusal: 403, a question of rights, not of the archive.
    assert response.status_code == 403 and "permission.role" in response.content.decode()
    assert not Skill.objects.filter(name="sneaky").exists()
