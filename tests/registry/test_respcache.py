"""Anonymous answers kept in the shared cache (registry/respcache.py): served without a query,
with an ETag; never kept for, nor served to, anyone with credentials; a new generation on every
write, in this process at once and from another process's data within a second; downloads keep
their resolution and bytes, count, and follow yanks and verdicts."""

from __future__ import annotations

import hashlib

import pytest

from registry import respcache
from registry.models import AuditEvent, SkillVersion
from registry.storage import archive_storage
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(alice_api):
    for name in ("alpha", "beta"):
        assert alice_api.publish(name, make_zip(name)).status_code == 201
    assert alice_api.publish("hidden", make_zip("hidden"), visibility="private").status_code == 201
    return alice_api


def names(response) -> set[str]:  # noqa: ANN001
    return {s["name"] for s in response.json()["results"]}


def test_a_second_anonymous_read_is_served_without_a_query_and_revalidates_to_304(
    published, anon_api, django_assert_num_queries
):
    first = anon_api.get("/api/v1/skills")
    assert first["Cache-Control"] == "public, no-cache" and first["ETag"]
    assert {"Authorization", "Cookie"} <= {v.strip() for v in first["Vary"].split(",")}
    with django_assert_num_queries(0):
        again = anon_api.get("/api/v1/skills")
    assert again.content == first.content and again["ETag"] == first["ETag"]
    revalidated = anon_api.client.get("/api/v1/skills", HTTP_IF_NONE_MATCH=first["ETag"])
    assert revalidated.status_code == 304 and revalidated["ETag"] == first["ETag"]


def test_answers_with_credentials_are_private_and_never_reach_anonymous_readers(published, anon_api, alice):
    by_token = published.get("/api/v1/skills")
    assert "hidden" in names(by_token) and by_token["Cache-Control"] == "private, no-cache"
    by_session = Api(user=alice).get("/api/v1/skills")
    assert "hidden" in names(by_session) and by_session["Cache-Control"] == "private, no-cache"
    assert names(anon_api.get("/api/v1/skills")) == {"alpha", "beta"}
    assert anon_api.get("/api/v1/skills/hidden").status_code == 404
    assert "hidden" in names(published.get("/api/v1/skills"))  # an anonymous answer is not served back


def test_a_publish_yank_or_deprecation_in_this_process_is_seen_at_once(published, anon_api):
    assert names(anon_api.get("/api/v1/skills")) == {"alpha", "beta"}
    assert published.publish("gamma", make_zip("gamma")).status_code == 201
    assert names(anon_api.get("/api/v1/skills")) == {"alpha", "beta", "gamma"}
    assert anon_api.get("/api/v1/skills/alpha").json()["versions"][0]["yanked"] is False
    published.post("/api/v1/skills/alpha/versions/1.0.0/yank", {"reason": "broken"})
    assert anon_api.get("/api/v1/skills/alpha").json()["versions"][0]["yanked"] is True
    published.post("/api/v1/skills/beta/versions/1.0.0/deprecate", {"message": "use gamma"})
    assert anon_api.get("/api/v1/skills/beta/versions/1.0.0").json()["deprecated"] == "use gamma"


def test_another_process_write_is_seen_once_the_generation_is_read_again(published, anon_api, monkeypatch):
    """Another process's write reaches this one through the data (an audit event every write
    service records), not through this process's signals: simulated by a write the signals do
    not see (QuerySet.update) plus its audit event."""
    assert anon_api.get("/api/v1/skills/alpha/versions/1.0.0").json()["deprecated"] == ""
    SkillVersion.objects.filter(skill__name="alpha").update(deprecated="elsewhere")
    assert anon_api.get("/api/v1/skills/alpha/versions/1.0.0").json()["deprecated"] == ""  # kept, trusted a second
    AuditEvent.objects.create(action="version.deprecate", skill="alpha", version="1.0.0")
    monkeypatch.setattr(respcache, "GENERATION_SECONDS", 0.0)
    assert anon_api.get("/api/v1/skills/alpha/versions/1.0.0").json()["deprecated"] == "elsewhere"


def test_a_malicious_verdict_hides_the_version_from_kept_answers_and_downloads(published, anon_api):
    path = "/api/v1/skills/alpha/versions/1.0.0/download"
    assert anon_api.get(path).status_code == 200
    assert anon_api.get("/api/v1/skills/alpha").status_code == 200
    sv = SkillVersion.objects.get(skill__name="alpha")
    sv.scan_verdict = "malicious"
    sv.save(update_fields=["scan_verdict"])  # as the scan check saves it
    assert anon_api.get(path).status_code in (403, 404)
    assert "1.0.0" not in [v["version"] for v in anon_api.get("/api/v1/skills/alpha").json().get("versions", [])]


def test_a_kept_download_is_resolved_without_the_version_query_and_still_counted(
    published, anon_api, django_assert_max_num_queries
):
    path = "/api/v1/skills/alpha/download"
    first = anon_api.get(path)
    body = b"".join(first.streaming_content)
    assert hashlib.sha256(body).hexdigest() == first["X-Checksum-Sha256"]
    with django_assert_max_num_queries(4):  # the count only: savepoint, two UPDATEs, release
        again = Api().client.get(path, REMOTE_ADDR="10.0.0.9")  # another client: counted again
    assert b"".join(again.streaming_content) == body and again["X-Skill-Version"] == "1.0.0"
    assert published.get("/api/v1/skills/alpha").json()["downloads"] == 2


def test_archive_bytes_are_read_from_storage_once_per_process(published, anon_api):
    path = "/api/v1/skills/beta/versions/1.0.0/download"
    first = anon_api.get(path)
    body = b"".join(first.streaming_content)
    sv = SkillVersion.objects.get(skill__name="beta")
    archive_storage().delete(sv.archive_key)  # storage gone: only the kept bytes can answer
    again = Api().client.get(path, REMOTE_ADDR="10.0.0.7")
    assert again.status_code == 200 and b"".join(again.streaming_content) == body


def test_archive_bytes_that_do_not_match_their_sha256_are_not_kept(published, settings):
    from registry.storage import archive_bytes_kept

    sv = SkillVersion.objects.get(skill__name="alpha")
    assert archive_bytes_kept(sv.archive_key, sha256="0" * 64, size=sv.size) is None
    assert archive_bytes_kept(sv.archive_key, sha256=sv.sha256, size=sv.size) is not None
    settings.SKILLYARD_ARCHIVE_MEMORY_ITEM_BYTES = sv.size - 1  # too large to keep: streamed instead
    assert archive_bytes_kept(sv.archive_key, sha256=sv.sha256, size=sv.size) is None


def test_no_answer_is_kept_when_the_cache_time_is_zero(published, anon_api, settings, django_assert_max_num_queries):
    settings.SKILLYARD_API_CACHE_SECONDS = 0
    anon_api.get("/api/v1/skills/alpha")
    with django_assert_max_num_queries(3) as queries:
        anon_api.get("/api/v1/skills/alpha")
    assert len(queries) > 0


def test_kept_answers_are_still_throttled_by_one_counter_per_client_and_window(published, anon_api, settings):
    from django.core.cache import cache

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min", "user": "100/min", "publish": "1/min"},
    }
    statuses = [anon_api.get("/api/v1/skills").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    counters = [key for key in cache._cache if ":throttle:anon:" in key]  # locmem's own keys
    assert len(counters) == 1 and cache.get(counters[0].split(":", 2)[2]) == 4  # a count, not a list of times
