"""A private skill is invisible — 404, never 403 — to everyone but its owner's members
(issue 3, acceptance 2). One matrix: every read path × every kind of caller."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from registry.models import Owner
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db

NAME = "secret-sauce"

# (path, kind): "item" answers 200 or 404; "listing" includes the skill or not.
ENDPOINTS = {
    "list": ("/api/v1/skills", "listing"),
    "search": (f"/api/v1/skills?q={NAME}", "listing"),
    "owner filter": ("/api/v1/skills?owner=acme", "listing"),
    "detail": (f"/api/v1/skills/{NAME}", "item"),
    "versions": (f"/api/v1/skills/{NAME}/versions", "item"),
    "version detail": (f"/api/v1/skills/{NAME}/versions/1.0.0", "item"),
    "dist-tags": (f"/api/v1/skills/{NAME}/dist-tags", "item"),
    "download": (f"/api/v1/skills/{NAME}/download", "item"),
    "download with range": (f"/api/v1/skills/{NAME}/download?version=^1", "item"),
    "version download": (f"/api/v1/skills/{NAME}/versions/1.0.0/download", "item"),
    "routing manifests": (f"/api/v1/routing-manifests?v={NAME}@1.0.0&v=open-skill@1.0.0", "listing"),
    "well-known skills": ("/.well-known/skills/index.json", "listing"),
    "well-known agent-skills": ("/.well-known/agent-skills/index.json", "listing"),
}

# caller -> may see the private skill of org "acme"
CALLERS = {
    "anonymous": False,
    "non-member token": False,
    "non-member session": False,
    "member token (any owner)": True,
    "member token scoped to acme": True,
    "member token scoped to another owner": False,
    "member session": True,
    "reader role token": True,
}


@pytest.fixture
def world(make_user, token_for):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    admin = Api(token_for(alice, "admin"))
    assert admin.post("/api/v1/orgs", {"name": "acme"}).status_code == 201
    assert admin.post("/api/v1/orgs/acme/members", {"username": "carol", "role": "reader"}).status_code == 201
    published = admin.publish(NAME, make_zip(NAME), owner="acme", visibility="private")
    assert published.status_code == 201, published.json()
    assert admin.publish("open-skill", make_zip("open-skill")).status_code == 201
    return {
        "anonymous": Api(),
        "non-member token": Api(token_for(bob, "admin")),
        "non-member session": Api(user=bob),
        "member token (any owner)": Api(token_for(alice, "read")),
        "member token scoped to acme": Api(token_for(alice, "read", owner="acme")),
        "member token scoped to another owner": Api(token_for(alice, "admin", owner="alice")),
        "member session": Api(user=alice),
        "reader role token": Api(token_for(carol, "read")),
    }


def names_in(response) -> set[str]:
    body = response.json()
    rows = next(body[key] for key in ("results", "skills", "manifests") if key in body)
    return {row["name"] for row in rows}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_private_skill_is_visible_only_to_members(world, caller, endpoint):
    path, kind = ENDPOINTS[endpoint]
    response = world[caller].client.get(path)
    # The well-known indexes are for other installers: public skills only, the same for everyone.
    visible = CALLERS[caller] and "well-known" not in endpoint
    if kind == "listing":
        assert response.status_code == 200
        assert (NAME in names_in(response)) is visible
        if "well-known" in endpoint or endpoint in ("list", "routing manifests"):
            assert "open-skill" in names_in(response)
    else:
        assert response.status_code == (200 if visible else 404), (
            response.status_code,
            getattr(response, "data", None),
        )
        if not visible:
            assert response.json()["code"] in {"skill.not_found", "version.not_found"}


def test_private_skill_writes_by_non_members_are_404_too(world):
    outsider = world["non-member token"]
    for response in (
        outsider.post(f"/api/v1/skills/{NAME}/versions/1.0.0/yank", {"reason": "x"}),
        outsider.post(f"/api/v1/skills/{NAME}/versions/1.0.0/deprecate", {"message": "x"}),
        outsider.put(f"/api/v1/skills/{NAME}/dist-tags/beta", {"version": "1.0.0"}),
        outsider.delete(f"/api/v1/skills/{NAME}"),
    ):
        assert response.status_code == 404
    # Publishing answers "name unavailable" for every name it cannot take, public or private
    # alike, so it says nothing about a private skill either.
    published = outsider.publish(NAME, make_zip(NAME, version="9.0.0"))
    assert published.status_code == 409 and published.json()["code"] == "name.unavailable"


def test_well_known_entries_carry_sha256_digest_and_url(world):
    response = world["anonymous"].client.get("/.well-known/agent-skills/index.json")
    entry = next(s for s in response.json()["skills"] if s["name"] == "open-skill")
    assert entry["digest"].startswith("sha256:") and len(entry["digest"]) == 7 + 64
    assert entry["type"] == "archive" and response.json()["$schema"].endswith("/discovery/0.2.0/schema.json")
    assert entry["url"].endswith("/.well-known/agent-skills/open-skill/1.0.0.zip")
    archive = world["anonymous"].client.get(entry["url"].split("testserver", 1)[1])
    assert "sha256:" + hashlib.sha256(archive.content).hexdigest() == entry["digest"]
    assert zipfile.ZipFile(io.BytesIO(archive.content)).namelist() == ["SKILL.md"]  # SKILL.md at the root
    skills = world["anonymous"].client.get("/.well-known/skills/index.json").json()["skills"]
    assert next(s for s in skills if s["name"] == "open-skill")["files"] == ["SKILL.md"]
    skill_md = world["anonymous"].client.get("/.well-known/skills/open-skill/SKILL.md")
    assert skill_md.status_code == 200 and skill_md.content.startswith(b"---\nname: open-skill")
    assert world["anonymous"].client.get(f"/.well-known/skills/{NAME}/SKILL.md").status_code == 404


def test_org_is_owner_of_the_private_skill(world):
    assert Owner.objects.get(name="acme").skills.get().visibility == "private"
