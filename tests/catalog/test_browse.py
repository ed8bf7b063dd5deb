"""The home page and /skills: counts, lists, filters, sorts, pages and what each row shows."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from registry import services
from registry.models import Skill
from tests.catalog.conftest import finish_checks

TESTS_PASSED = {"result": "passed", "exit_code": 0, "duration_ms": 420, "log": "Ran 3 tests\nOK\n"}


def names(html: str) -> list[str]:
    """The skills a page lists, in order (each row's heading link)."""
    return re.findall(r'<h3><a href="/skills/([^"]+)">', html)


def set_downloads(downloads: dict[str, int]) -> None:
    for name, count in downloads.items():
        Skill.objects.filter(name=name).update(downloads=count)


@pytest.fixture
def bob(db):
    return services.user_create(username="bob")


@pytest.fixture
def three(publish, bob):
    """pdf-tools (alice, documents), pdf-merge (bob, documents), k8s-deploy (alice, devops)."""
    publish("pdf-tools", description="Rotate the pages of PDF files.", extra="category: documents")
    publish("pdf-merge", description="Merge PDF files into one.", extra="category: documents", user=bob)
    publish("k8s-deploy", description="Deploy services to Kubernetes.", extra="category: devops")
    set_downloads({"pdf-tools": 5, "pdf-merge": 50, "k8s-deploy": 500})
    now = timezone.now()
    for days, name in ((3, "pdf-tools"), (1, "pdf-merge"), (2, "k8s-deploy")):
        Skill.objects.filter(name=name).update(updated_at=now - timedelta(days=days))


def test_browse_filters_by_category_and_owner(three):
    assert names(Client().get("/skills", {"category": "documents"}).content.decode()) == ["pdf-merge", "pdf-tools"]
    assert names(Client().get("/skills", {"owner": "bob"}).content.decode()) == ["pdf-merge"]
    both = Client().get("/skills", {"owner": "alice", "category": "documents"}).content.decode()
    assert names(both) == ["pdf-tools"]
    assert "No skill matches these filters" in Client().get("/skills", {"category": "cooking"}).content.decode()


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("downloads", ["k8s-deploy", "pdf-merge", "pdf-tools"]),
        ("updated", ["pdf-merge", "k8s-deploy", "pdf-tools"]),
        ("name", ["k8s-deploy", "pdf-merge", "pdf-tools"]),
        (None, ["k8s-deploy", "pdf-merge", "pdf-tools"]),  # most downloaded by default
    ],
)
def test_browse_sorts(three, sort, expected):
    query = {"sort": sort} if sort else {}
    assert names(Client().get("/skills", query).content.decode()) == expected


def test_search_sorts_by_relevance_unless_asked_otherwise(three):
    query = {"q": "rotate the pages of a pdf"}
    assert names(Client().get("/skills", query).content.decode()) == ["pdf-tools", "pdf-merge"]
    by_downloads = names(Client().get("/skills", {**query, "sort": "downloads"}).content.decode())
    assert by_downloads == ["pdf-merge", "pdf-tools"]
    page = Client().get("/skills", query).content.decode()
    assert '<option value="relevance" selected>' in page


def test_browse_pages_keep_the_filters(publish, monkeypatch):
    import catalog.views

    monkeypatch.setattr(catalog.views, "PAGE_SIZE", 2)
    for name in ("a-one", "b-two", "c-three", "d-four", "e-five"):
        publish(name, extra="category: letters")
    first = Client().get("/skills", {"category": "letters", "sort": "name"}).content.decode()
    assert names(first) == ["a-one", "b-two"] and "Page 1 of 3" in first and "Previous" not in first
    following = re.search(r'href="(\?[^"]*page=2)"', first).group(1).replace("&amp;", "&")
    assert "category=letters" in following and "sort=name" in following
    second = Client().get("/skills" + following).content.decode()
    assert names(second) == ["c-three", "d-four"] and "Page 2 of 3" in second and "Previous" in second
    last = Client().get("/skills", {"category": "letters", "sort": "name", "page": 3}).content.decode()
    assert names(last) == ["e-five"] and "Next" not in last
    beyond = Client().get("/skills", {"category": "letters", "sort": "name", "page": 99}).content.decode()
    assert names(beyond) == ["e-five"]  # past the end: the last page


def test_each_row_shows_name_description_owner_version_downloads_updated_and_checks(publish, alice):
    publish("pdf-tools", description="Rotate the pages of PDF files.")
    publish("pdf-tools", version="1.2.0", description="Rotate the pages of PDF files.")
    finish_checks(
        "pdf-tools",
        "1.2.0",
        scan={"verdict": "review", "findings": []},
        tests=TESTS_PASSED,
    )
    set_downloads({"pdf-tools": 1234})
    page = Client().get("/skills").content.decode()
    row = page[page.index('<li class="card">') : page.index("</li>", page.index('<li class="card">'))]
    today = timezone.now().strftime("%Y-%m-%d")
    for expected in (
        '<a href="/skills/pdf-tools">pdf-tools</a>',
        "Rotate the pages of PDF files.",
        '<a href="/owners/alice">alice</a>',
        "v1.2.0",
        "1234 downloads",
        f"updated {today}",
        '<span class="badge review">scan: review</span>',
        '<span class="badge passed">tests: passed</span>',
    ):
        assert expected in row, expected


def test_a_row_without_finished_checks_says_pending(publish):
    publish("pdf-tools")
    page = Client().get("/skills").content.decode()
    assert "scan: pending" in page and "tests: pending" in page


def test_home_counts_and_lists_recent_and_most_downloaded(three, publish):
    publish("secret-tool", visibility="private")
    page = Client().get("/").content.decode()
    assert "3 skills to browse" in page  # the private one is not counted for the public
    recent = page[page.index("Recently updated") : page.index("Most downloaded")]
    popular = page[page.index("Most downloaded") :]
    assert names(recent) == ["pdf-merge", "k8s-deploy", "pdf-tools"]
    assert names(popular) == ["k8s-deploy", "pdf-merge", "pdf-tools"]
    assert "secret-tool" not in page
    assert recent.count("· v1.0.0") == 3  # each row says its version, as on /skills


def test_home_invites_the_first_publish_when_empty(db):
    page = Client().get("/").content.decode()
    assert "0 skills to browse" in page and 'href="/publish"' in page


def test_home_counts_a_members_private_skills(three, publish, signed_in):
    publish("secret-tool", visibility="private")
    assert "4 skills to browse" in signed_in.get("/").content.decode()
