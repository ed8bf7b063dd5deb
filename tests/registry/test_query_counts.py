"""The read endpoints make a fixed number of queries, however many skills and versions exist.

A page of skills or a skill's versions must never cost a query each (N+1). The counts include
the token lookup; a download adds its count update (two UPDATEs in one transaction, whose
savepoint statements are counted here because each test runs inside a transaction).
"""

from __future__ import annotations

import pytest

from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db

SKILLS = 6
VERSIONS = ("1.0.0", "1.1.0", "2.0.0-beta.1")


@pytest.fixture
def crowded(alice_api):
    """Enough skills and versions that a per-row query would blow every budget below."""
    for i in range(SKILLS):
        name = f"skill-{i}"
        for version in VERSIONS:
            assert alice_api.publish(name, make_zip(name, version=version)).status_code == 201
    assert alice_api.publish("secret", make_zip("secret"), visibility="private").status_code == 201
    alice_api.put("/api/v1/skills/skill-0/dist-tags/beta", {"version": "2.0.0-beta.1"})
    return alice_api


@pytest.fixture(params=["anonymous", "token"])
def reader(request, crowded, anon_api):
    return crowded if request.param == "token" else anon_api


def test_list_queries_do_not_grow_with_the_page(reader, django_assert_max_num_queries):
    # token, count, page, latest versions of the page, their deprecation messages
    with django_assert_max_num_queries(5):
        body = reader.get("/api/v1/skills").json()
    assert len(body["results"]) >= SKILLS
    assert {s["latest_version"] for s in body["results"] if s["name"].startswith("skill-")} == {"1.1.0"}


def test_detail_queries_do_not_grow_with_the_versions(reader, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):  # token, skill + owner, versions, dist-tags
        body = reader.get("/api/v1/skills/skill-0").json()
    assert [v["version"] for v in body["versions"]] == ["2.0.0-beta.1", "1.1.0", "1.0.0"]


def test_version_detail_is_one_query_after_the_token(reader, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):  # token, version + skill + owner + publisher
        body = reader.get("/api/v1/skills/skill-0/versions/1.0.0").json()
    assert body["published_by"] == "alice" and body["name"] == "skill-0"


def test_exact_download_queries(reader, django_assert_max_num_queries):
    # token, version + skill; the count: savepoint, two UPDATEs, release
    with django_assert_max_num_queries(6):
        response = reader.get("/api/v1/skills/skill-0/versions/1.0.0/download")
    assert response.status_code == 200


def test_resolved_download_queries(reader, django_assert_max_num_queries):
    # token, skill, versions, dist-tags; the count: savepoint, two UPDATEs, release
    with django_assert_max_num_queries(8):
        response = reader.get("/api/v1/skills/skill-0/download")
    assert response["X-Skill-Version"] == "1.1.0"


def test_private_skill_stays_404_to_others_on_the_one_query_path(crowded, anon_api):
    assert anon_api.get("/api/v1/skills/secret/versions/1.0.0").json()["code"] == "skill.not_found"
    assert crowded.get("/api/v1/skills/secret/versions/1.0.0").status_code == 200
    assert crowded.get("/api/v1/skills/secret/versions/9.9.9").json()["code"] == "version.not_found"


def test_a_repeated_download_by_the_same_client_writes_nothing(reader, django_assert_max_num_queries):
    assert reader.get("/api/v1/skills/skill-0/versions/1.0.0/download").status_code == 200
    # counted once an hour per client: the repeat is token + version lookup, no transaction
    with django_assert_max_num_queries(2):
        response = reader.get("/api/v1/skills/skill-0/versions/1.0.0/download")
    assert response.status_code == 200
