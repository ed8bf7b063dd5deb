"""Tags and categories: on cards and skill pages, browsable (/skills?tag=, /skills?category=), the
browse filter a list of the categories that exist, and /categories with counts that respect
visibility (a private skill counts for members only, a blocked one for nobody else)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.catalog.conftest import finish_checks

pytestmark = pytest.mark.django_db


@pytest.fixture
def shelf(publish):
    publish("pdf-merge", extra="category: Documents\ntags: [pdf, merge]")
    publish("pdf-rotate", extra="category: documents\ntags: [pdf]")
    publish("chart-maker", extra="category: data\ntags: [charts]")
    publish("plain-one")


def test_the_categories_page_counts_each_category_and_tag(shelf):
    html = Client().get("/categories").content.decode()
    assert '<a href="/skills?category=data">data</a> <span class="muted">1 skill</span>' in html
    assert '<a href="/skills?category=documents">documents</a> <span class="muted">2 skills</span>' in html
    assert '<a href="/skills?tag=pdf">#pdf</a> <span class="muted">2 skills</span>' in html
    assert html.index("#pdf") < html.index("#charts")  # most used first


def test_counts_leave_out_private_skills_for_outsiders_and_blocked_ones_for_everyone_else(shelf, publish, signed_in):
    publish("secret-docs", visibility="private", extra="category: documents\ntags: [pdf]")
    publish("wiper", extra="category: cleanup\ntags: [pdf]")
    finish_checks("wiper", scan={"verdict": "malicious", "findings": []})
    public = Client().get("/categories").content.decode()
    assert 'documents</a> <span class="muted">2 skills' in public and "cleanup" not in public
    assert '#pdf</a> <span class="muted">2 skills' in public
    member = signed_in.get("/categories").content.decode()  # alice owns both
    assert 'documents</a> <span class="muted">3 skills' in member and "cleanup" in member


def test_browse_filters_by_tag_and_by_category_case_insensitively(shelf):
    by_tag = Client().get("/skills", {"tag": "merge"}).content.decode()
    assert "pdf-merge" in by_tag and "pdf-rotate" not in by_tag and "chart-maker" not in by_tag
    by_category = Client().get("/skills", {"category": "documents"}).content.decode()
    assert "pdf-merge" in by_category and "pdf-rotate" in by_category and "chart-maker" not in by_category


def test_the_category_filter_is_a_list_of_the_categories_that_exist(shelf):
    html = Client().get("/skills", {"category": "data"}).content.decode()
    assert '<input id="category"' not in html
    select = html[html.index('<select id="category"') : html.index("</select>", html.index('<select id="category"'))]
    assert re.findall(r'<option value="([^"]*)"', select) == ["", "data", "documents"]
    assert '<option value="data" selected>' in select


def test_cards_and_the_skill_page_show_the_category_and_tags_as_links(shelf):
    for path in ("/skills", "/skills/pdf-merge"):
        html = Client().get(path).content.decode()
        assert '<a class="category" href="/skills?category=documents">documents</a>' in html, path
        assert '<a class="tag" href="/skills?tag=merge">#merge</a>' in html, path
    assert 'class="taxonomy"' not in Client().get("/skills/plain-one").content.decode()
