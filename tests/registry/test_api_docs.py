"""The API docs page: a catalog page (header, styles, strict CSP) where every endpoint has its
description and an example request and response made from the schema."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.test import Client

from registry.api.index import operations

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def page() -> str:
    response = Client().get("/api/v1/docs/")
    assert response.status_code == 200
    return response.content.decode()


def _sections(html: str) -> dict[str, str]:
    return {
        m.group(1): m.group(2) for m in re.finditer(r'<section class="api-op" id="([^"]+)"(.*?)</section>', html, re.S)
    }


def test_every_endpoint_has_a_description_and_an_example_request_and_response(page):
    sections = _sections(page)
    ops = operations()
    assert len(sections) == len(ops)
    for op in ops:
        section = unescape(sections[op.spec["operationId"]])
        assert op.description and op.description in section
        [request] = re.findall(r'<pre class="example"><code>(curl .*?)</code></pre>', section, re.S)
        url = re.escape(op.path).replace(r"\{", "{").replace(r"\}", "}")
        assert re.search(re.sub(r"{\w+}", "[^/{}]+", url) + "'$", request), request  # placeholders filled
        assert ("-X " + op.method in request) == (op.method != "GET")
        assert "Example response: 2" in section


def test_json_examples_follow_the_response_schema(page):
    section = unescape(_sections(page)["skills_versions_create"])
    example = json.loads(re.findall(r'<pre class="example"><code>(\{.*?)</code></pre>', section, re.S)[0])
    assert example["version"] == "1.0.0" and example["name"] == "pdf-summary"
    assert "-F archive=@pdf-summary.zip" in section and "Authorization: Bearer" in section


def test_the_docs_are_a_catalog_page_without_inline_style_or_script(page):
    assert 'class="brand" href="/"' in page and "catalog/site.css" in page
    assert "<style" not in page and "<script" not in page
    assert 'href="/api/v1/"' in page


def test_every_json_answer_has_a_shape_to_show(page):
    empty = [
        op.spec["operationId"]
        for op in operations()
        for status, answer in op.spec.get("responses", {}).items()
        if status.startswith("2")
        and "application/json" in answer.get("content", {})
        and answer["content"]["application/json"].get("schema", {}).get("type") == "object"
        and not {"properties", "additionalProperties"} & set(answer["content"]["application/json"]["schema"])
    ]
    assert empty == []
    section = unescape(_sections(page)[".well_known_skills_index.json_retrieve"])
    assert '"files": [' in section and '"skills": [' in section
