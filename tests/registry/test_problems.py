"""Every error is RFC 9457 problem details; throttling answers 429 with Retry-After; docs exist."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.registry.conftest import Api

pytestmark = pytest.mark.django_db

PROBLEM_KEYS = {"type", "title", "status", "detail", "code", "instance", "errors"}


def assert_problem(response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert PROBLEM_KEYS <= set(body)
    assert body["status"] == status and body["code"] == code
    assert body["type"] == f"urn:skillyard:problem:{code}"


def test_unknown_api_path_is_a_404_problem():
    assert_problem(Client().get("/api/v1/no-such-thing"), 404, "not_found")


def test_wrong_method_is_a_405_problem():
    assert_problem(Client().delete("/api/v1/skills"), 405, "method.not_allowed")


def test_unexpected_error_is_a_500_problem(settings):
    settings.ROOT_URLCONF = "tests.registry.urls_failing"
    client = Client(raise_request_exception=False)
    assert_problem(client.get("/api/v1/boom"), 500, "server.error")


def test_throttled_requests_get_429_with_retry_after(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min", "user": "100/min", "publish": "1/min"},
    }
    client = Client()
    answers = [client.get("/api/v1/skills") for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]
    assert_problem(answers[3], 429, "throttled")
    assert int(answers[3]["Retry-After"]) > 0


def test_publish_has_its_own_tighter_throttle(settings, alice, token_for):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "100/min", "user": "100/min", "publish": "1/min"},
    }
    from tests.registry.conftest import make_zip

    api = Api(token_for(alice, "publish"))
    assert api.publish("one", make_zip("one")).status_code == 201
    assert_problem(api.publish("two", make_zip("two")), 429, "throttled")
    assert api.get("/api/v1/skills").status_code == 200


def test_openapi_schema_lists_the_contract():
    response = Client().get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/skills",
        "/api/v1/skills/{name}",
        "/api/v1/skills/{name}/versions",
        "/api/v1/skills/{name}/download",
        "/api/v1/tokens",
        "/api/v1/orgs",
        "/api/v1/me",
    ):
        assert path in paths


def test_docs_page_renders_without_external_assets():
    response = Client().get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/api/v1/skills/{name}/versions" in html
    assert "<script src=" not in html
