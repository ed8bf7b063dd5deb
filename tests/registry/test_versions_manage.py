"""Version ranges through the download endpoint (acceptance 6), yank, deprecate and dist-tags.

The rules themselves are ``skillctl.format.versions`` (exhaustively tested in tests/client/test_versions.py);
these cases prove the registry applies exactly them, case by case, on real published versions.
"""

from __future__ import annotations

import pytest

from registry.models import AuditEvent
from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db

PUBLISHED = ["0.9.0", "1.0.0", "1.1.0", "1.2.0", "1.2.1-beta.1", "2.0.0-rc.1", "2.0.0", "2.1.0"]


@pytest.fixture
def skill(alice_api):
    for version in PUBLISHED:
        assert alice_api.publish("tool", make_zip("tool", version=version)).status_code == 201
    assert alice_api.post("/api/v1/skills/tool/versions/1.2.0/yank", {"reason": "broken"}).status_code == 200
    assert alice_api.put("/api/v1/skills/tool/dist-tags/beta", {"version": "1.2.1-beta.1"}).status_code == 200
    return alice_api


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, "2.1.0"),
        ("", "2.1.0"),
        ("latest", "2.1.0"),
        ("*", "2.1.0"),
        ("1.1.0", "1.1.0"),
        ("=1.1.0", "1.1.0"),
        ("v1.1.0", "1.1.0"),
        ("1.2.0", "1.2.0"),  # yanked, but pinned exactly
        ("^1.0", "1.1.0"),  # skips yanked 1.2.0 and the prerelease 1.2.1-beta.1
        ("^1.2", None),
        ("~1.1", "1.1.0"),
        ("~1.2", None),
        (">=1,<2", "1.1.0"),
        (">=1 <2", "1.1.0"),
        ("~=1.0", "1.1.0"),
        ("<2.0.0", "1.1.0"),
        (">=2.0.0-rc.1", "2.1.0"),
        ("2.0.0-rc.1", "2.0.0-rc.1"),
        ("^0.9", "0.9.0"),
        ("1.x", "1.1.0"),
        ("1.0.x || 2.0.x", "2.0.0"),
        ("beta", "1.2.1-beta.1"),
        ("nightly", None),
        ("3", None),
    ],
)
def test_download_resolves_specs_like_a_package_manager(skill, spec, expected):
    response = skill.client.get("/api/v1/skills/tool/download", {"version": spec} if spec is not None else {})
    if expected is None:
        assert response.status_code == 404
        assert response.json()["code"] == "version.not_found"
    else:
        assert response.status_code == 200, response.content
        assert response["X-Skill-Version"] == expected


def test_yanked_version_keeps_its_reason_and_exact_download(skill):
    versions = {v["version"]: v for v in skill.get("/api/v1/skills/tool").json()["versions"]}
    assert versions["1.2.0"]["yanked"] and versions["1.2.0"]["yanked_reason"] == "broken"
    exact = skill.get("/api/v1/skills/tool/versions/1.2.0/download")
    assert exact.status_code == 200 and exact["X-Skill-Yanked"] == "broken"
    assert AuditEvent.objects.filter(action="version.yank", version="1.2.0").exists()


def test_yank_header_is_one_ascii_line_within_the_reason_limit(skill, monkeypatch):
    import registry.api.downloads

    skill.post("/api/v1/skills/tool/versions/1.1.0/yank", {"reason": "bröken\n  on   arm"})
    assert skill.get("/api/v1/skills/tool/versions/1.1.0/download")["X-Skill-Yanked"] == "br?ken on arm"
    monkeypatch.setattr(registry.api.downloads, "MAX_REASON_CHARS", 5)  # the limit is the named one
    assert skill.get("/api/v1/skills/tool/versions/1.1.0/download")["X-Skill-Yanked"] == "br?ke"


def test_unyank_brings_a_version_back_into_ranges(skill):
    assert skill.delete("/api/v1/skills/tool/versions/1.2.0/yank").status_code == 200
    assert skill.get("/api/v1/skills/tool/download", version="^1.0")["X-Skill-Version"] == "1.2.0"


def test_yanking_the_latest_moves_the_default(skill):
    skill.post("/api/v1/skills/tool/versions/2.1.0/yank", {"reason": "oops"})
    assert skill.get("/api/v1/skills/tool").json()["dist_tags"]["latest"] == "2.0.0"


def test_deprecation_is_shown_and_clearable(skill):
    assert (
        skill.post("/api/v1/skills/tool/versions/1.0.0/deprecate", {"message": "use 2.x"}).json()["deprecated"]
        == "use 2.x"
    )
    assert skill.get("/api/v1/skills/tool/versions/1.0.0/download")["X-Skill-Deprecated"] == "use 2.x"
    assert skill.post("/api/v1/skills/tool/versions/1.0.0/deprecate", {"message": ""}).json()["deprecated"] == ""


def test_dist_tags_set_list_and_remove(skill):
    assert skill.get("/api/v1/skills/tool/dist-tags").json() == {"beta": "1.2.1-beta.1", "latest": "2.1.0"}
    assert skill.put("/api/v1/skills/tool/dist-tags/latest", {"version": "2.0.0"}).status_code == 200
    assert skill.get("/api/v1/skills/tool/download")["X-Skill-Version"] == "2.0.0"
    assert skill.delete("/api/v1/skills/tool/dist-tags/latest").status_code == 204
    assert skill.get("/api/v1/skills/tool/download")["X-Skill-Version"] == "2.1.0"


@pytest.mark.parametrize("tag", ["1.2", "x", "^1", "9bad"])
def test_tag_names_that_read_as_versions_are_refused(skill, tag):
    response = skill.put(f"/api/v1/skills/tool/dist-tags/{tag}", {"version": "2.0.0"})
    assert response.status_code == 422 and response.json()["code"] == "tag.invalid"


def test_other_users_cannot_yank(skill, bob_api):
    response = bob_api.post("/api/v1/skills/tool/versions/1.0.0/yank", {"reason": "mine now"})
    assert response.status_code == 403


def test_read_token_cannot_yank(skill, alice, token_for):
    from tests.registry.conftest import Api

    response = Api(token_for(alice, "read")).post("/api/v1/skills/tool/versions/1.0.0/yank", {})
    assert response.status_code == 403 and response.json()["code"] == "token.scope"


def test_an_explicit_latest_tag_is_the_default_everywhere(skill, anon_api):
    """List, detail, download and the well-known index agree on the default version."""
    assert skill.put("/api/v1/skills/tool/dist-tags/latest", {"version": "2.0.0"}).status_code == 200
    listed = {s["name"]: s["latest_version"] for s in anon_api.get("/api/v1/skills").json()["results"]}
    assert listed["tool"] == "2.0.0"
    assert anon_api.get("/api/v1/skills/tool").json()["dist_tags"]["latest"] == "2.0.0"
    assert anon_api.get("/api/v1/skills/tool/download")["X-Skill-Version"] == "2.0.0"
    index = anon_api.get("/.well-known/skills/index.json").json()
    entries = index.get("skills", index) if isinstance(index, dict) else index
    assert any("2.0.0" in str(entry) and "tool" in str(entry) for entry in entries)


def test_the_listed_summary_is_the_default_versions(alice_api, anon_api):
    """Description, category and tags in list and search follow the version list, detail and
    download serve: through publish, the ``latest`` tag, yank, unyank and delete."""
    for version in ("1.0.0", "2.0.0"):
        data = make_zip("tool", version=version, description=f"Tool {version}.", extra=f"category: c{version[0]}\n")
        assert alice_api.publish("tool", data).status_code == 201

    def listed() -> tuple[str, str]:
        row = next(s for s in anon_api.get("/api/v1/skills").json()["results"] if s["name"] == "tool")
        assert row["description"] == f"Tool {row['latest_version']}."  # never from another version
        return row["latest_version"], row["category"]

    assert listed() == ("2.0.0", "c2")
    alice_api.put("/api/v1/skills/tool/dist-tags/latest", {"version": "1.0.0"})
    assert listed() == ("1.0.0", "c1")
    alice_api.delete("/api/v1/skills/tool/dist-tags/latest")
    assert listed() == ("2.0.0", "c2")
    alice_api.post("/api/v1/skills/tool/versions/2.0.0/yank", {"reason": "broken"})
    assert listed() == ("1.0.0", "c1")
    assert anon_api.get("/api/v1/skills", q="Tool 1.0.0").json()["count"] == 1
    alice_api.delete("/api/v1/skills/tool/versions/2.0.0/yank")
    assert listed() == ("2.0.0", "c2")
