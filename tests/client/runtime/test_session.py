"""The session's glue: tool names every provider accepts, and a server skill without the SDK."""

from __future__ import annotations

import json
import re
import sys

from skillctl.runtime.session import WIRE_NAME_MAX, wire_name
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import trusting, write_skill

PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI and Anthropic accept


def test_wire_names_are_readable_when_they_can_be():
    assert wire_name("mcp:notes.search") == "mcp__notes__search"
    assert wire_name("mcp:pdf-tools.rotate_pages") == "mcp__pdf-tools__rotate_pages"


def test_wire_names_are_valid_and_distinct_for_any_tool_name():
    tools = ["mcp:s.a.b", "mcp:s.a/b", "mcp:s.a b", "mcp:s.ä", "mcp:s." + "x" * 100, "mcp:s." + "x" * 101]
    names = [wire_name(t) for t in tools]
    assert all(PROVIDER_NAME.match(n) and len(n) <= WIRE_NAME_MAX for n in names)
    assert len(set(names)) == len(names)
    assert wire_name("mcp:s.a/b") == wire_name("mcp:s.a/b")  # stable


def test_without_the_sdk_a_server_skill_still_loads_and_says_which_extra(tmp_path, home, monkeypatch):
    write_skill(
        tmp_path / "skills" / "srv", "---\nname: srv\ndescription: Has a server.\nmcp: python3 server.py\n---\nHello.\n"
    )
    config = trusting(tmp_path / "skills", "srv")  # trusted, so only the missing SDK stops it
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails as if the extra were absent
    with SkillSet.from_dir(tmp_path / "skills", semantic=False, config=config) as skills:
        text = skills.handle_tool_call("load_skill", {"name": "srv"})
        assert "Hello." in text and "[runtime.mcp_missing]" in text and "skillyard[agent]" in text
        assert [t["name"] for t in skills.tool_definitions("anthropic")] == ["load_skill", "read_skill_file"]


def test_malformed_calls_are_answered_not_raised(tmp_path, home):
    write_skill(tmp_path / "skills" / "notes", "---\nname: notes\ndescription: Take notes.\n---\nHi.\n")
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False)
    for tool, arguments in [("load_skill", "[1, 2]"), ("load_skill", "{not json"), (None, {}), ("mcp__x__y", {})]:
        reply = json.loads(skills.handle_tool_call(tool, arguments))
        assert reply["error"] in ("tool.bad_call", "tool.unknown")


def test_the_bridge_tools_are_offered_only_while_a_skill_is_available(tmp_path, home):
    """Seed 001: load_skill and read_skill_file appear only when there is a skill to load."""
    root = tmp_path / "skills"
    root.mkdir()
    with SkillSet.from_dir(root, semantic=False) as empty:
        assert empty.tool_definitions("openai") == []
    write_skill(root / "notes", "---\nname: notes\ndescription: Take notes.\n---\nHi.\n")
    # A skill that cannot work here (a missing binary) is not available either.
    write_skill(
        tmp_path / "gated" / "gh",
        "---\nname: gh\ndescription: GitHub.\nrequires:\n  bins: [no-such-binary-zq9]\n---\nHi.\n",
    )
    with SkillSet.from_dir(tmp_path / "gated", semantic=False) as gated:
        assert gated.tool_definitions("openai") == []
    with SkillSet.from_dir(root, semantic=False) as skills:
        assert [t["name"] for t in skills.tool_definitions("anthropic")] == ["load_skill", "read_skill_file"]
