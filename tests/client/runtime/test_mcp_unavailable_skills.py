"""``skillctl mcp`` (official SDK client over stdio) neither lists nor gives a skill whose
required variable has no value, and gives SKILL.md with its variables substituted (issue 36
item 3: no declared ``{{VAR}}`` reaches a model unresolved)."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from tests.client.runtime.conftest import write_skill

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

WEATHER_MD = """---
name: weather
description: Weather forecasts for any city.
vars:
  WEATHER_TOKEN:
    required: true
    secret: true
  UNITS: metric
---
Use token {{WEATHER_TOKEN}} and {{UNITS}} units.
"""


async def _seen(project) -> dict:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skillctl", "mcp"], env=dict(os.environ), cwd=str(project)
    )
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        found = (await client.call_tool("find_skills", {"query": "weather forecast for Paris"})).structured_content
        loaded = (await client.call_tool("load_skill", {"name": "weather"})).content[0].text
        try:
            text = (await client.read_resource("skill://weather/SKILL.md")).contents[0].text
        except Exception as exc:  # noqa: BLE001 (the SDK raises its own error type for an error answer)
            text = f"error: {exc}"
        return {"uris": uris, "found": [s["name"] for s in found["skills"]], "loaded": loaded, "text": text}


def test_an_unavailable_skill_is_not_listed_found_loaded_or_read(project, monkeypatch):
    monkeypatch.delenv("WEATHER_TOKEN", raising=False)
    write_skill(project / ".agents" / "skills" / "weather", WEATHER_MD)
    seen = anyio.run(_seen, project)
    assert "skill://weather/SKILL.md" not in seen["uris"] and seen["found"] == []
    assert json.loads(seen["loaded"])["error"] == "vars.missing"
    assert seen["text"].startswith("error:") and "{{" not in seen["text"]


def test_an_available_skill_is_read_with_its_variables_substituted_and_secrets_masked(project):
    folder = write_skill(project / ".agents" / "skills" / "weather", WEATHER_MD)
    (folder / "vars.json").write_text('{"WEATHER_TOKEN": "tok-very-secret-value"}')
    seen = anyio.run(_seen, project)
    assert "skill://weather/SKILL.md" in seen["uris"] and seen["found"] == ["weather"]
    for text in (seen["text"], seen["loaded"]):
        assert "metric units" in text and "{{" not in text and "tok-very-secret-value" not in text
