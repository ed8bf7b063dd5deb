"""List, search, detail, version detail and both downloads (DESIGN §5)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue(alice_api):
    for name, version, extra in [
        ("pdf-tools", "1.0.0", "category: documents\ntags:\n  - pdf\n  - convert"),
        ("pdf-tools", "1.1.0", "category: documents\ntags:\n  - pdf\n  - convert"),
        ("pdf", "0.1.0", ""),
        ("csv-magic", "2.0.0", "category: data"),
    ]:
        response = alice_api.publish(name, make_zip(name, version=version, extra=extra))
        assert response.status_code == 201, response.json()
    return alice_api


def test_list_is_paginated(catalogue, anon_api):
    body = anon_api.get("/api/v1/skills", page_size=2).json()
    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"] and body["previous"] is None
    second = anon_api.get("/api/v1/skills", page_size=2, page=2).json()
    assert len(second["results"]) == 1


def test_search_ranks_the_exact_name_first(catalogue, anon_api):
    anon_api.get("/api/v1/skills/pdf-tools/download")  # more downloads must not beat an exact name
    names = [s["name"] for s in anon_api.get("/api/v1/skills", q="pdf").json()["results"]]
    assert names[0] == "pdf"
    assert set(names) == {"pdf", "pdf-tools"}


def test_filters_by_owner_category_and_tag(catalogue, anon_api):
    assert anon_api.get("/api/v1/skills", owner="nobody").json()["count"] == 0
    assert anon_api.get("/api/v1/skills", owner="alice").json()["count"] == 3
    by_category = anon_api.get("/api/v1/skills", category="data").json()["results"]
    assert [s["name"] for s in by_category] == ["csv-magic"]
    by_tag = anon_api.get("/api/v1/skills", tag="convert").json()["results"]
    assert [s["name"] for s in by_tag] == ["pdf-tools"]


def test_list_entries_carry_latest_version(catalogue, anon_api):
    entry = next(s for s in anon_api.get("/api/v1/skills").json()["results"] if s["name"] == "pdf-tools")
    assert entry["latest_version"] == "1.1.0"
    assert entry["owner"] == "alice"


def test_detail_has_versions_and_dist_tags(catalogue, anon_api):
    body = anon_api.get("/api/v1/skills/pdf-tools").json()
    assert [v["version"] for v in body["versions"]] == ["1.1.0", "1.0.0"]
    assert body["dist_tags"] == {"latest": "1.1.0"}
    assert body["visibility"] == "public"
    assert body["versions"][0]["download_url"].endswith("/api/v1/skills/pdf-tools/versions/1.1.0/download")


def test_detail_versions_say_whether_a_routing_manifest_exists(catalogue, anon_api):
    versions = anon_api.get("/api/v1/skills/pdf-tools").json()["versions"]
    assert [v["has_routing_manifest"] for v in versions] == [False, False]
    detail = anon_api.get("/api/v1/skills/pdf-tools/versions/1.1.0").json()
    assert detail["has_routing_manifest"] is (detail["routing_manifest"] is not None)


def test_version_detail_has_manifest_files_and_body(catalogue, anon_api):
    body = anon_api.get("/api/v1/skills/pdf-tools/versions/1.0.0").json()
    assert body["manifest"]["name"] == "pdf-tools"
    assert body["files"][0]["path"] == "SKILL.md"
    assert "Do the thing" in body["body"]
    assert body["routing_manifest"] is None  # the manifest check has not run
    assert set(body["checks"]) == {"scan", "manifest", "tests"}
    assert {c["status"] for c in body["checks"].values()} == {"pending"}


def test_unknown_skill_and_version_are_404_problems(anon_api, db):
    response = anon_api.get("/api/v1/skills/nope")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "skill.not_found"


def test_download_sends_the_archive_with_its_sha256(catalogue, anon_api):
    response = anon_api.get("/api/v1/skills/pdf-tools/versions/1.0.0/download")
    assert response.status_code == 200
    data = b"".join(response.streaming_content)
    digest = hashlib.sha256(data).hexdigest()
    assert response["X-Checksum-Sha256"] == digest
    assert response["ETag"] == f'"{digest}"'
    assert response["Repr-Digest"] == f"sha-256=:{base64.b64encode(bytes.fromhex(digest)).decode()}:"
    assert response["Content-Type"] == "application/zip"
    assert 'filename="pdf-tools-1.0.0.zip"' in response["Content-Disposition"]
    assert "immutable" in response["Cache-Control"]


def test_download_with_matching_etag_is_304(catalogue, anon_api):
    first = anon_api.get("/api/v1/skills/pdf-tools/versions/1.0.0/download")
    again = anon_api.client.get("/api/v1/skills/pdf-tools/versions/1.0.0/download", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304


def test_download_resolves_latest_by_default_and_counts(catalogue, anon_api):
    response = anon_api.get("/api/v1/skills/pdf-tools/download")
    assert response["X-Skill-Version"] == "1.1.0"
    b"".join(response.streaming_content)
    assert anon_api.get("/api/v1/skills/pdf-tools").json()["downloads"] == 1
    assert anon_api.get("/api/v1/skills/pdf-tools/versions/1.1.0").json()["downloads"] == 1


def test_download_headers_say_what_an_installer_would_ask_the_version_list(catalogue, anon_api):
    from registry.models import SkillVersion

    first = anon_api.get("/api/v1/skills/pdf-tools/download", version="^1.0")
    assert (first["X-Skill-Scan-Verdict"], first["X-Skill-Routing-Manifest"]) == ("pending", "no")
    sv = SkillVersion.objects.get(skill__name="pdf-tools", version="1.1.0")
    sv.scan_verdict, sv.routing_manifest = "warn", {"keywords": ["pdf"]}
    sv.save(update_fields=["scan_verdict", "routing_manifest"])  # as the checks save it
    again = anon_api.get("/api/v1/skills/pdf-tools/download", version="^1.0")
    assert (again["X-Skill-Scan-Verdict"], again["X-Skill-Routing-Manifest"]) == ("warn", "yes")
    listed = {v["version"]: v for v in anon_api.get("/api/v1/skills/pdf-tools").json()["versions"]}["1.1.0"]
    assert (listed["scan_verdict"], listed["has_routing_manifest"]) == ("warn", True)


def test_download_with_an_invalid_spec_is_400(catalogue, anon_api):
    response = anon_api.get("/api/v1/skills/pdf-tools/download", version=">=>1")
    assert response.status_code == 400
    assert response.json()["code"] == "version.spec_invalid"


def test_routing_manifests_of_many_versions_in_one_request(catalogue, anon_api):
    from registry.models import SkillVersion

    SkillVersion.objects.filter(skill__name="pdf", version="0.1.0").update(routing_manifest={"keywords": ["pdf"]})
    body = anon_api.get(
        "/api/v1/routing-manifests", v=["pdf@0.1.0", "pdf-tools@1.1.0", "pdf@9.9.9", "nothing@1.0.0", "pdf@0.1.0"]
    ).json()
    assert body["manifests"] == [
        {"name": "pdf", "version": "0.1.0", "routing_manifest": {"keywords": ["pdf"]}},
        {"name": "pdf-tools", "version": "1.1.0", "routing_manifest": None},  # its manifest check is pending
    ]


def test_routing_manifests_refuse_too_many_and_malformed_specs(catalogue, anon_api):
    from registry.api.skills import MAX_MANIFEST_BATCH

    too_many = anon_api.get("/api/v1/routing-manifests", v=[f"pdf@0.{i}.0" for i in range(MAX_MANIFEST_BATCH + 1)])
    assert (too_many.status_code, too_many.json()["code"]) == (422, "manifests.too_many")
    malformed = anon_api.get("/api/v1/routing-manifests", v=["pdf"])
    assert (malformed.status_code, malformed.json()["code"]) == (422, "manifests.invalid_spec")
    assert anon_api.get("/api/v1/routing-manifests").json() == {"manifests": []}
