"""`skillctl search` and `skillctl show NAME[@spec]` against a fake registry edge."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from skillctl.cli.main import main
from skillctl.registry_client import RegistryClient

DETAIL = {
    "name": "weather",
    "description": "Forecasts for a city.",
    "owner": {"name": "acme"},
    "visibility": "public",
    "dist_tags": {"latest": "1.1.0", "beta": "2.0.0-rc.1"},
    "versions": [
        {
            "version": "1.0.0",
            "sha256": "a" * 64,
            "size": 900,
            "status": "ok",
            "yanked": False,
            "yanked_reason": "",
            "published_at": "2024-05-01T10:00:00Z",
        },
        {
            "version": "1.1.0",
            "sha256": "b" * 64,
            "size": 2048,
            "status": "ok",
            "yanked": False,
            "yanked_reason": "",
            "published_at": "2024-06-01T10:00:00Z",
        },
        {
            "version": "1.2.0",
            "sha256": "c" * 64,
            "size": 2100,
            "status": "ok",
            "yanked": True,
            "yanked_reason": "leaks the API key in logs",
            "published_at": "2024-07-01T10:00:00Z",
        },
        {
            "version": "2.0.0-rc.1",
            "sha256": "d" * 64,
            "size": 2200,
            "status": "ok",
            "yanked": False,
            "yanked_reason": "",
            "published_at": "2024-08-01T10:00:00Z",
        },
    ],
}
MANIFEST = {
    "name": "weather",
    "description": "Forecasts for a city.",
    "os": ["linux", "darwin"],
    "requires": {
        "bins": ["curl"],
        "any_bins": ["jq", "gojq"],
        "env": ["WEATHER_KEY"],
        "config": [],
        "skills": ["geo"],
        "mcp": [],
    },
    "primary_env": "WEATHER_KEY",
    "install": [{"kind": "apt", "package": "jq", "bins": ["jq"], "label": "", "os": [], "id": ""}],
}


@pytest.fixture
def registry(monkeypatch):
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        path = request.url.path
        if path == "/api/v1/skills":
            q = request.url.params.get("q")
            results = (
                [
                    {
                        "name": "weather",
                        "latest_version": "1.1.0",
                        "owner": "acme",
                        "description": "Forecasts for a city. " * 10,
                    }
                ]
                if q == "weather"
                else []
            )
            return httpx.Response(200, json={"count": len(results) + (5 if results else 0), "results": results})
        if path == "/api/v1/skills/weather":
            return httpx.Response(200, json=DETAIL)
        if path.startswith("/api/v1/skills/weather/versions/"):
            version = path.rsplit("/", 1)[1]
            return httpx.Response(
                200,
                json={
                    "version": version,
                    "manifest": MANIFEST,
                    "body": f"# Weather {version}\nAsk the forecast API.\n",
                    "files": [
                        {"path": "SKILL.md", "size": 120, "sha256": "e" * 64},
                        {"path": "scripts/forecast.py", "size": 812, "sha256": "f" * 64},
                    ],
                },
            )
        return httpx.Response(404, json={"title": "Not Found", "detail": "no such skill", "errors": []})

    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(handler))
    return seen


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_prints_a_table(capsys, registry):
    code, out, err = run(capsys, "search", "weather")
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["NAME", "VERSION", "OWNER", "DESCRIPTION"]
    assert row.startswith("weather") and "1.1.0" in row and "acme" in row and row.endswith("…")
    assert "--page 2" in err


def test_search_json_is_the_registry_answer(capsys, registry):
    code, out, _ = run(capsys, "search", "weather", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["results"][0]["name"] == "weather" and doc["query"] == "weather"


def test_search_without_results_says_so_on_stderr(capsys, registry):
    code, out, err = run(capsys, "search", "nothing")
    assert (code, out) == (0, "") and "No skills match" in err


def test_show_lists_versions_with_yank_marks_tags_and_requirements(capsys, registry):
    code, out, _ = run(capsys, "show", "weather@^1.0")
    assert code == 0
    assert "dist-tags: beta=2.0.0-rc.1, latest=1.1.0" in out
    assert "resolved: ^1.0 -> 1.1.0" in out
    assert "yanked: leaks the API key in logs" in out
    table = re.findall(r"^\*?\s+(\d\S*)\s+\d{4}-\d\d-\d\d", out, re.MULTILINE)
    assert table == ["2.0.0-rc.1", "1.2.0", "1.1.0", "1.0.0"]  # newest first
    assert any(ln.startswith("*") and "1.1.0" in ln for ln in out.splitlines())  # the resolved one
    assert "os: linux, darwin" in out
    assert "bins: curl" in out and "any of bins: jq, gojq" in out
    assert "env: WEATHER_KEY" in out and "skills: geo" in out
    assert "install: sudo apt-get install jq" in out
    assert str(registry[-1].url).endswith("/api/v1/skills/weather/versions/1.1.0")


def test_show_json(capsys, registry):
    code, out, _ = run(capsys, "show", "weather", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["resolved"] == "1.1.0"
    assert [v["version"] for v in doc["versions"]] == ["2.0.0-rc.1", "1.2.0", "1.1.0", "1.0.0"]
    assert doc["versions"][1]["yanked"] is True
    assert doc["dist_tags"]["beta"] == "2.0.0-rc.1"
    assert doc["requirements"]["any_bins"] == ["jq", "gojq"]
    assert doc["requirements"]["primary_env"] == "WEATHER_KEY"


def test_show_with_a_dist_tag_and_an_exact_yanked_version(capsys, registry):
    assert json.loads(run(capsys, "show", "weather@beta", "--json")[1])["resolved"] == "2.0.0-rc.1"
    assert json.loads(run(capsys, "show", "weather@1.2.0", "--json")[1])["resolved"] == "1.2.0"


def test_show_with_no_matching_version_exits_1_but_still_lists(capsys, registry):
    code, out, err = run(capsys, "show", "weather@^3", "--json")
    assert code == 1
    doc = json.loads(out)  # stdout stays one JSON document
    assert doc["resolved"] is None and len(doc["versions"]) == 4
    assert "no version of weather matches" in err and "hint:" in err


def test_show_unknown_skill_is_not_found_with_hint(capsys, registry):
    code, _, err = run(capsys, "show", "nope")
    assert code == 1 and "no such skill" in err and "skillctl search" in err


def test_show_bad_spec_is_usage_error_before_any_request(capsys, registry):
    code, _, err = run(capsys, "show", "weather@>=banana")
    assert code == 2 and "hint:" in err and registry == []


def test_network_failure_exits_3(capsys, monkeypatch):
    def handler(request):
        raise httpx.ConnectError("refused")

    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(handler))
    code, _, err = run(capsys, "search", "x")
    assert code == 3 and "hint:" in err


def test_show_files_and_readme_of_the_resolved_version(registry, capsys):
    code, out, _ = run(capsys, "show", "weather@1.0.0", "--files", "--readme")
    assert code == 0
    assert re.search(r"scripts/forecast\.py\s+812", out) and "# Weather 1.0.0" in out
    code, out, _ = run(capsys, "show", "weather", "--files", "--readme", "--json")
    data = json.loads(out)
    assert [f["path"] for f in data["files"]] == ["SKILL.md", "scripts/forecast.py"]
    assert data["readme"].startswith("# Weather 1.1.0")


def weak_and_missing(monkeypatch) -> list[httpx.Request]:
    """A registry edge whose search finds only weak matches and whose skill 404 suggests names."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/api/v1/skills":
            match = {"strength": "weak", "score": 0.5}
            found = [{"name": "image-resize", "latest_version": "1.0.0", "owner": "acme", "match": match}]
            return httpx.Response(200, json={"count": 1, "results": found})
        body = {"detail": "No such skill.", "code": "skill.not_found", "errors": [], "suggestions": ["weather"]}
        return httpx.Response(404, json=body, headers={"Content-Type": "application/problem+json"})

    monkeypatch.setattr(RegistryClient, "default_transport", httpx.MockTransport(handler))
    return seen


def test_search_says_when_nothing_is_a_close_match(capsys, monkeypatch):
    seen = weak_and_missing(monkeypatch)
    code, out, err = run(capsys, "search", "zip", "my", "files", "--owner", "acme", "--tag", "images")
    assert code == 0 and out.splitlines()[1].startswith("image-resize")
    assert "No close match for 'zip my files'" in err and "nearest" in err
    assert dict(seen[0].url.params) == {"q": "zip my files", "page": "1", "owner": "acme", "tag": "images"}


def test_a_missing_skill_hints_the_names_the_registry_suggests(capsys, monkeypatch):
    weak_and_missing(monkeypatch)
    code, _, err = run(capsys, "show", "wether")
    assert code == 1 and "Did you mean weather?" in err
