"""Advisories in the catalog: the banner on affected version pages and the skill page, the list of
public advisories, an advisory's page, and the owner's form to file and withdraw them."""

from __future__ import annotations

import pytest
from django.test import Client

from registry import services
from registry.access import Actor
from registry.models import Advisory

pytestmark = pytest.mark.django_db


def file(alice, name: str = "pdf-tools", **fields) -> Advisory:
    values = {"summary": "Sends the API key out", "severity": "high", "affected": "^1.0", **fields}
    return services.advisory_create(actor=Actor(alice), name=name, **values)


def test_an_affected_version_and_the_skill_page_carry_the_banner_an_unaffected_one_does_not(publish, alice):
    publish("pdf-tools", version="1.0.0")
    publish("pdf-tools", version="2.0.0")
    advisory = file(alice, affected="<2")
    affected = Client().get("/skills/pdf-tools/versions/1.0.0").content.decode()
    assert f'Advisory <a href="/advisories/{advisory.osv_id}">{advisory.osv_id}</a> (high) affects 1.0.0' in affected
    newest = Client().get("/skills/pdf-tools").content.decode()  # the default version, 2.0.0
    assert "affects 2.0.0" not in newest and "Other advisories on pdf-tools: <a" in newest
    services.advisory_withdraw(actor=Actor(alice), osv_id=advisory.osv_id)
    assert advisory.osv_id not in Client().get("/skills/pdf-tools/versions/1.0.0").content.decode()


def test_the_list_shows_public_advisories_only(publish, alice):
    publish("pdf-tools")
    publish("secret", visibility="private")
    public, private = file(alice), file(alice, name="secret", summary="Private trouble")
    page = Client().get("/advisories").content.decode()
    assert public.osv_id in page and "Sends the API key out" in page
    assert private.osv_id not in page and "Private trouble" not in page


def test_an_advisory_page_shows_its_versions_and_details_and_hides_private_ones(publish, alice, signed_in):
    publish("pdf-tools", version="1.0.0")
    publish("pdf-tools", version="1.1.0")
    advisory = file(alice, details="Run **skillctl update**.<script>alert(1)</script>")
    page = Client().get(f"/advisories/{advisory.osv_id}").content.decode()
    assert "/skills/pdf-tools/versions/1.0.0" in page and "/skills/pdf-tools/versions/1.1.0" in page
    assert "<strong>skillctl update</strong>" in page and "<script>alert(1)</script>" not in page
    publish("secret", visibility="private")
    hidden = file(alice, name="secret")
    assert Client().get(f"/advisories/{hidden.osv_id}").status_code == 404
    assert signed_in.get(f"/advisories/{hidden.osv_id}").status_code == 200


def test_the_owner_files_and_withdraws_from_the_skill_page(publish, signed_in):
    publish("pdf-tools")
    page = signed_in.get("/skills/pdf-tools").content.decode()
    assert 'action="/skills/pdf-tools/advisories"' in page and "csrfmiddlewaretoken" in page
    form = {
        "action": "file",
        "summary": "Leaks",
        "severity": "critical",
        "affected": "1.0.0",
        "aliases": "CVE-1, CVE-2",
    }
    response = signed_in.post("/skills/pdf-tools/advisories", form)
    assert response.status_code == 302
    advisory = Advisory.objects.get()
    assert (advisory.severity, advisory.aliases) == ("critical", ["CVE-1", "CVE-2"])
    signed_in.post("/skills/pdf-tools/advisories", {"action": "withdraw", "advisory": advisory.osv_id})
    assert Advisory.objects.get().withdrawn_at is not None
    bad = signed_in.post("/skills/pdf-tools/advisories", {**form, "affected": "latest"})
    assert bad.status_code == 422 and "advisory.affected_invalid" in bad.content.decode()


def test_others_see_no_form_and_may_not_post(publish, make_other):
    publish("pdf-tools")
    other = make_other()
    assert 'action="/skills/pdf-tools/advisories"' not in other.get("/skills/pdf-tools").content.decode()
    form = {"action": "file", "summary": "x", "severity": "low", "affected": "*"}
    assert other.post("/skills/pdf-tools/advisories", form).status_code == 403
    assert Client().post("/skills/pdf-tools/advisories", form).status_code == 302  # to sign in
    assert not Advisory.objects.exists()


@pytest.fixture
def make_other(db):
    def make() -> Client:
        user = services.user_create(username="mallory")
        user.set_password("pw-mallory-123")
        user.save()
        browser = Client()
        assert browser.login(username="mallory", password="pw-mallory-123")
        return browser

    return make
