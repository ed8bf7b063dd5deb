"""`skillctl search`, `show` and `install` against the real registry (its WSGI application in
this process, over httpx's WSGI transport: the client's own HTTP code, no network): the web
search test's queries give the same top results, weak matches are said as such, and a skill
404 hints the nearest names."""

from __future__ import annotations

import httpx
import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from skillctl.cli.main import main
from skillctl.registry_client import RegistryClient
from tests.catalog.test_search import QUERIES, WEAK
from tests.registry.test_search import needs_semantic, publish, skills  # noqa: F401 (the shared skills)

REGISTRY = "http://127.0.0.1"


@pytest.fixture(autouse=True)
def registry(monkeypatch, tmp_path):
    yield from _registry(monkeypatch, tmp_path)


def _registry(monkeypatch, tmp_path):  # noqa: ANN202
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_REGISTRY", REGISTRY)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(RegistryClient, "default_transport", httpx.WSGITransport(app=WSGIHandler()))
    yield


def skillctl(capsys, *argv: str) -> tuple[int, str, str]:
    # As Django's test client does around each request: a request's start and end must not close
    # the test's database connection (on PostgreSQL, inside the test's transaction, they would).
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    try:
        code = main(list(argv))
    finally:
        for signal in (signals.request_started, signals.request_finished):
            signal.connect(close_old_connections)
    out, err = capsys.readouterr()
    return code, out, err


def names(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]


@needs_semantic
@pytest.mark.parametrize(("q", "meant"), QUERIES.items())
def test_the_web_searchs_queries_find_the_same_skill_first(skills, capsys, q, meant):  # noqa: F811
    code, out, err = skillctl(capsys, "search", *q.split())
    assert code == 0 and names(out)[0] == meant and "No close match" not in err


@needs_semantic
def test_weak_matches_are_said_as_such(skills, capsys):  # noqa: F811
    code, out, err = skillctl(capsys, "search", WEAK)
    assert code == 0 and names(out)[0] == "image-resize"
    assert f"No close match for {WEAK!r}" in err and "nearest" in err


def test_search_filters_by_owner(alice_api, bob_api, capsys):
    publish(alice_api, "pdf-tools", description="Rotate PDF pages.")
    publish(bob_api, "pdf-rotate", description="Rotate PDF pages.")
    assert names(skillctl(capsys, "search", "rotate", "pdf", "pages", "--owner", "bob")[1]) == ["pdf-rotate"]


@pytest.mark.parametrize("command", [["show", "pdf-toosl"], ["install", "pdf-toosl"], ["use", "pdf-toosl"]])
def test_a_missing_name_hints_the_nearest(alice_api, capsys, tmp_path, monkeypatch, command):
    publish(alice_api, "pdf-tools")
    monkeypatch.chdir(tmp_path)
    code, _, err = skillctl(capsys, *command)
    assert code == 1 and "Did you mean pdf-tools?" in err
