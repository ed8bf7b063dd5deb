"""GET /api/v1/: every endpoint with its methods and a one-line description, from the schema."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern

from registry.api import urls as api_urls
from tests.registry.conftest import Api

pytestmark = pytest.mark.django_db

NOT_ENDPOINTS = {"schema/", "docs/"}  # the schema and the docs page describe the API, are not in it


def _schema_path(route: str) -> str:
    return "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def test_the_index_lists_every_route_of_the_api_with_a_description_per_method():
    response = Api().get("/api/v1/")
    assert response.status_code == 200
    body = response.json()
    listed = {e["path"]: e["methods"] for e in body["endpoints"]}
    routes = {
        _schema_path(str(p.pattern))
        for p in api_urls.urlpatterns
        if isinstance(p, URLPattern) and str(p.pattern) not in NOT_ENDPOINTS
    }
    assert routes <= set(listed)  # a new route is listed without anyone editing the index
    assert all(methods and all(methods.values()) for methods in listed.values())
    assert listed["/api/v1/skills/{name}/versions"].keys() == {"GET", "POST"}
    assert listed["/api/v1/skills/{name}/versions"]["POST"].startswith("Publish a version")


def test_the_index_links_the_docs_and_the_schema():
    body = Api().get("/api/v1/").json()
    assert body["docs"].endswith("/api/v1/docs/") and body["schema"].endswith("/api/v1/schema/")
    assert Api().get(body["schema"].split("testserver", 1)[1]).status_code == 200
