"""Catalog search with the semantic extra (registry/search.py, the one search): a query that shares no word with a
skill but means it finds it through the manifest check's stored centroid; without semantic,
search is lexical exactly as before."""

from __future__ import annotations

import io
import re

import pytest
from django.test import Client

from registry.models import SkillVersion
from skillctl.routing import semantic
from worker.tasks import run_check_now

pytestmark = pytest.mark.skipif(not semantic.available(), reason="the semantic extra is not installed")
RESIZE = "Resize, crop and compress images (PNG, JPEG, WebP) to reduce file size."
QUERY = "make my pictures smaller"  # not one word of it in the skill's name, description or manifest


# The skills every search surface is tested on (the API's and skillctl's tests import these, so
# the web, the API and the CLI answer the same queries with the same top results).
SKILLS = {
    "image-resize": RESIZE,
    "pdf-tools": "Rotate, merge and split the pages of PDF files.",
    "k8s-deploy": "Deploy services to Kubernetes clusters.",
    "calculator": "Evaluate arithmetic: sum, subtract, multiply and divide figures exactly.",
    "git-commit": "Write conventional commit messages and commit staged changes with git.",
    "csv-profiler": "Profile CSV and Excel files: column types, missing values and outliers.",
}
# Requests as people type them, and the skill each means (first in every surface's answer).
QUERIES = {
    QUERY: "image-resize",
    "rotate the pages of a pdf": "pdf-tools",
    "rotate a pdf": "pdf-tools",
    "k8s-deploy": "k8s-deploy",
    "add up numbers": "calculator",
    "make a commit": "git-commit",
    "profile my spreadsheet": "csv-profiler",
}


def publish_search_skills(publish) -> None:
    """SKILLS, each with its manifest check finished as the worker finishes it."""
    for name, description in SKILLS.items():
        publish(name, description=description)
    for version in SkillVersion.objects.all():
        assert run_check_now(version.id, "manifest") == "done"


@pytest.fixture
def skills(publish) -> None:
    publish_search_skills(publish)


def search(q: str) -> str:
    return Client().get("/skills", {"q": q}).content.decode()


def test_a_query_meaning_a_skill_finds_it_without_sharing_a_word(skills):
    manifest = SkillVersion.objects.get(skill__name="image-resize").routing_manifest
    assert not {"pictures", "picture", "smaller", "small"} & set(str(manifest).lower().replace(",", " ").split())
    page = search(QUERY)
    assert "image-resize" in page and "pdf-tools" not in page and "k8s-deploy" not in page


def test_a_vector_another_embedder_made_is_not_used_until_made_again(skills):
    """After an upgrade that changes the embedder, stored vectors are in another space: comparing
    a query with them would rank by noise. `rerun_checks --vectors` makes them again."""
    from django.core.management import call_command

    SkillVersion.objects.update(routing_vector_model="an-older-embedder")
    for version in SkillVersion.objects.select_related("skill"):
        version.skill.save()  # as an upgrade would find them: no search index cached for them yet
    assert "image-resize" not in search(QUERY)  # lexical only: no word of the query is the skill's
    call_command("rerun_checks", "--vectors", stdout=io.StringIO())
    assert set(SkillVersion.objects.values_list("routing_vector_model", flat=True)) == {semantic.MODEL_ID}
    assert "image-resize" in search(QUERY)
    out = io.StringIO()
    call_command("rerun_checks", "--vectors", stdout=out)
    assert out.getvalue().startswith("made 0 search vector(s)")  # nothing left to make


def test_without_semantic_the_same_query_finds_nothing(skills, monkeypatch):
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    page = search(QUERY)
    assert "image-resize" not in page and "No skill matches" in page


def test_a_nonsense_query_still_matches_nothing(skills):
    for q in ("qwxz flurb zzzt", "bake sourdough bread"):
        page = search(q)
        assert "No skill matches" in page and "browse every skill" in page


def found(page: str) -> list[str]:
    """The skills a results page lists, in order."""
    return list(dict.fromkeys(re.findall(r'href="/skills/([a-z0-9-]+)"', page)))


@pytest.mark.parametrize(("q", "meant"), QUERIES.items())
def test_each_request_finds_the_skill_it_means_first(skills, q, meant):
    assert found(search(q))[0] == meant


WEAK = "zip my files"  # shares "files" with two skills, means neither


def test_a_weak_match_is_said_as_such(skills):
    page = search(WEAK)
    assert found(page)[:1] == ["image-resize"]
    assert "No close match for “zip my files”; nearest:" in page
    assert "No close match" not in search("rotate the pages of a pdf")


@pytest.mark.parametrize("semantic_on", ["1", "0"])
def test_a_typo_in_the_query_is_read_as_the_skills_word(skills, monkeypatch, semantic_on):
    monkeypatch.setenv("SKILLYARD_SEMANTIC", semantic_on)
    assert found(search("kubernetes"))[:1] == ["k8s-deploy"]
    page = search("kubernets")  # a letter dropped
    assert found(page)[:1] == ["k8s-deploy"] and "Searched for “kubernetes”" in page
    assert "Searched for" not in search("kubernetes")
    assert found(search("rotaet pages"))[:1] == ["pdf-tools"]  # two letters swapped
    assert "No skill matches" in search("qwxz flurb")  # gibberish is one edit from nothing
