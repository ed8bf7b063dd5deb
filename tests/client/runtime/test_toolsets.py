"""Toolsets: trusted classes' public methods as tools (schemas from type hints), untrusted ones
never imported, failures as tool errors, all under the tool policy."""

from __future__ import annotations

import enum
import json
import sys
import textwrap
from typing import Annotated, Any, Literal

import pytest

from skillctl.config import Config
from skillctl.errors import SkillctlError
from skillctl.reporting import Reporter
from skillctl.runtime.toolsets import json_schema
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import write_skill

CALC_PY = '''
import enum
from typing import Annotated


class Rounding(enum.Enum):
    UP = "up"
    DOWN = "down"


class Calculator:
    """Arithmetic for the calc skill."""

    def add(self, a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    def scale(self, values: list[float], factor: Annotated[float, "what to multiply by"] = 2.0) -> dict:
        return {"scaled": [v * factor for v in values]}

    def round(self, x: float, how: Rounding) -> str:
        return f"{x} rounded {how.value}"

    def divide(self, a: float, b: float) -> float:
        return a / b

    def _secret(self) -> str:
        return "hidden"

    async def later(self) -> None:
        pass

    def spread(self, *values: int) -> int:
        return sum(values)
'''

SIDE_EFFECT_PY = """
import os
open(os.environ["SKILLYARD_TEST_IMPORTED"], "w").write("imported")


class Tool:
    def run(self) -> str:
        return "ran"
"""


@pytest.fixture
def packages(tmp_path, monkeypatch):
    root = tmp_path / "packages" / "acme_tools"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "calc.py").write_text(textwrap.dedent(CALC_PY))
    (root / "sneaky.py").write_text(textwrap.dedent(SIDE_EFFECT_PY))
    (root / "broken.py").write_text(
        "class Broken:\n    def __init__(self):\n        raise RuntimeError('no licence')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    monkeypatch.setenv("SKILLYARD_TEST_IMPORTED", str(tmp_path / "imported"))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("acme_tools")]:
        del sys.modules[name]


def calc_skill(root, toolsets: str = "['acme_tools.calc:Calculator']", extra: str = "") -> None:
    write_skill(
        root / "calc", f"---\nname: calc\ndescription: Do sums.\ntoolsets: {toolsets}\n{extra}---\nUse the tools.\n"
    )


def open_skills(root, *, trusted=("acme_tools.calc:Calculator",), tools: dict | None = None) -> SkillSet:
    values = {"runtime": {"trusted_toolsets": list(trusted)}, **({"tools": tools} if tools else {})}
    return SkillSet.from_dir(root, semantic=False, config=Config(values=values), reporter=Reporter())


def offered(skills) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in skills.tool_definitions("openai")}


# --- trusted -----------------------------------------------------------------------------------


def test_a_trusted_toolset_gives_its_public_methods_as_tools_with_schemas(packages):
    calc_skill(packages / "skills")
    skills = open_skills(packages / "skills")
    assert not any(n.startswith("toolset__") for n in offered(skills))
    reply = skills.handle_tool_call("load_skill", {"name": "calc"})
    assert "toolset__calc__add, toolset__calc__divide, toolset__calc__round, toolset__calc__scale" in reply
    tools = offered(skills)
    assert [n for n in tools if n.startswith("toolset__")] == [
        "toolset__calc__add",
        "toolset__calc__divide",
        "toolset__calc__round",
        "toolset__calc__scale",
    ]
    add = tools["toolset__calc__add"]
    assert add["description"] == "[calc skill, toolset] Add two whole numbers."
    assert add["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    scale = tools["toolset__calc__scale"]["parameters"]
    assert scale["properties"] == {
        "values": {"type": "array", "items": {"type": "number"}},
        "factor": {"type": "number", "description": "what to multiply by"},
    }
    assert scale["required"] == ["values"]
    assert tools["toolset__calc__round"]["parameters"]["properties"]["how"] == {"enum": ["up", "down"]}


def test_calls_run_the_methods(packages):
    calc_skill(packages / "skills")
    skills = open_skills(packages / "skills", trusted=["acme_tools.*"])
    skills.handle_tool_call("load_skill", {"name": "calc"})
    assert skills.handle_tool_call("toolset__calc__add", {"a": 2, "b": 3}) == "5"
    assert skills.handle_tool_call("toolset:calc.add", '{"a": 2, "b": 3}') == "5"  # either form
    assert json.loads(skills.handle_tool_call("toolset__calc__scale", {"values": [1, 2]})) == {"scaled": [2.0, 4.0]}
    assert skills.handle_tool_call("toolset__calc__round", {"x": 1.5, "how": "up"}) == "1.5 rounded up"


def test_failures_are_tool_errors(packages):
    calc_skill(packages / "skills")
    skills = open_skills(packages / "skills")
    skills.handle_tool_call("load_skill", {"name": "calc"})
    error = lambda tool, args: json.loads(skills.handle_tool_call(tool, args))  # noqa: E731
    assert error("toolset__calc__divide", {"a": 1, "b": 0}) == {
        "error": "toolset.call_failed",
        "message": "toolset:calc.divide failed: ZeroDivisionError: division by zero",
        "hint": None,
    }
    assert error("toolset__calc__add", {"a": 1})["error"] == "tool.bad_call"
    assert error("toolset__calc__add", {"a": 1, "b": 2, "c": 3})["error"] == "tool.bad_call"
    assert error("toolset__calc__round", {"x": 1, "how": "sideways"})["error"] == "tool.bad_call"
    assert error("toolset:calc._secret", {})["error"] == "tool.unknown"
    assert error("toolset:other.add", {})["error"] == "tool.unknown"


# --- not trusted, not loadable ------------------------------------------------------------------


def test_an_untrusted_toolset_is_not_imported_and_says_why(packages):
    calc_skill(packages / "skills", toolsets="['acme_tools.sneaky:Tool']")
    skills = open_skills(packages / "skills")
    reply = skills.handle_tool_call("load_skill", {"name": "calc"})
    assert "Use the tools." in reply and "[toolset.untrusted]" in reply and "none allowed here" in reply
    assert not (packages / "imported").exists() and "acme_tools.sneaky" not in sys.modules
    assert "[toolset.untrusted]" in skills.reporter.warnings[0]
    assert not any(n.startswith("toolset__") for n in offered(skills))


@pytest.mark.parametrize("ref", ["acme_tools.missing:Tool", "acme_tools.calc:Missing", "acme_tools.broken:Broken"])
def test_a_trusted_toolset_that_cannot_be_built_is_reported(packages, ref):
    calc_skill(packages / "skills", toolsets=f"['{ref}']")
    skills = open_skills(packages / "skills", trusted=[ref])
    reply = skills.handle_tool_call("load_skill", {"name": "calc"})
    assert "[toolset.load_failed]" in reply and "Use the tools." in reply


def test_a_toolset_is_never_imported_from_the_skill_folder(packages):
    """A skill cannot ship the module a trusted name points at."""
    write_skill(
        packages / "skills" / "calc",
        "---\nname: calc\ndescription: Sums.\ntoolsets: ['localtools.calc:Tool']\n---\n",
        {
            "localtools/__init__.py": "",
            "localtools/calc.py": "class Tool:\n    def run(self) -> str:\n        return 'ran'\n",
        },
    )
    skills = open_skills(packages / "skills", trusted=["localtools.*"])
    assert "[toolset.load_failed]" in skills.handle_tool_call("load_skill", {"name": "calc"})


def test_the_trust_list_must_be_a_list_of_patterns(packages):
    calc_skill(packages / "skills")
    for wrong in ["acme_tools.*", [1], ["no-colon-no-star"]]:
        skills = SkillSet.from_dir(
            packages / "skills", semantic=False, config=Config(values={"runtime": {"trusted_toolsets": wrong}})
        )
        with pytest.raises(SkillctlError) as err:
            skills.session()
        assert err.value.code == "runtime.config_invalid"


# --- policy ------------------------------------------------------------------------------------


def test_toolset_tools_are_under_the_tool_policy(packages):
    calc_skill(packages / "skills")
    denied = open_skills(packages / "skills", tools={"deny": ["toolset:calc.divide"]})
    denied.handle_tool_call("load_skill", {"name": "calc"})
    assert "toolset__calc__divide" not in offered(denied) and "toolset__calc__add" in offered(denied)
    assert json.loads(denied.handle_tool_call("toolset__calc__divide", {"a": 1, "b": 1}))["error"] == "tool.not_allowed"
    coding = open_skills(packages / "skills", tools={"profile": "coding"})
    coding.handle_tool_call("load_skill", {"name": "calc"})
    assert "toolset__calc__add" in offered(coding)  # group:toolsets


def test_a_policy_allowing_none_of_its_tools_does_not_even_import_the_toolset(packages):
    calc_skill(packages / "skills", toolsets="['acme_tools.sneaky:Tool']")
    skills = open_skills(packages / "skills", trusted=["acme_tools.*"], tools={"profile": "minimal"})
    assert "[tool.not_allowed]" in skills.handle_tool_call("load_skill", {"name": "calc"})
    assert not (packages / "imported").exists()


def test_a_skill_with_allowed_tools_keeps_its_own_toolset_tools(packages):
    calc_skill(packages / "skills", extra="allowed-tools: [read]\n")
    skills = open_skills(packages / "skills")
    skills.handle_tool_call("load_skill", {"name": "calc"})
    assert skills.handle_tool_call("toolset__calc__add", {"a": 1, "b": 1}) == "2"


# --- schemas -----------------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (type(None), {"type": "null"}),
        (list, {"type": "array"}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}}),
        (dict[str, int], {"type": "object"}),
        (dict, {"type": "object"}),
        (Literal["a", "b"], {"enum": ["a", "b"]}),
        (Colour, {"enum": ["red", "blue"]}),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (Annotated[str, "a city"], {"type": "string", "description": "a city"}),
        (Any, {}),
        (object, {}),
    ],
)
def test_type_hints_become_json_schemas(hint, schema):
    assert json_schema(hint) == schema


# --- seed 004: a skill's own toolsets, trusted by digest ------------------------------------------

HELLO_PY = '''
class HelloToolset:
    def greet(self, who: str) -> str:
        """Greet someone by name."""
        return f"hello, {who}"
'''


def hello_skill(root):
    folder = write_skill(
        root / "hello-extended",
        '---\nname: hello-extended\ndescription: Greetings.\ntoolsets:\n  - "toolsets/index:HelloToolset"\n---\nGreet.\n',
    )
    (folder / "toolsets").mkdir()
    (folder / "toolsets" / "index.py").write_text(textwrap.dedent(HELLO_PY))
    return folder


def test_a_skill_relative_toolset_loads_only_once_its_code_is_trusted(tmp_path, home):
    from skillctl.config import load_config
    from skillctl.discovery import load_installed
    from skillctl.runtime.toolsets import trust_skill_toolsets

    folder = hello_skill(tmp_path / "skills")
    untrusted = SkillSet.from_dir(tmp_path / "skills", semantic=False, config=load_config(), reporter=Reporter())
    assert "toolset.untrusted" in untrusted.handle_tool_call("load_skill", {"name": "hello-extended"})
    assert not any(n.startswith("toolset__") for n in offered(untrusted))

    assert trust_skill_toolsets(load_installed("dir", folder)) is True
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False, config=load_config(), reporter=Reporter())
    assert "toolset__hello-extended__greet" in skills.handle_tool_call("load_skill", {"name": "hello-extended"})
    assert skills.handle_tool_call("toolset__hello-extended__greet", {"who": "ada"}) == "hello, ada"

    (folder / "toolsets" / "index.py").write_text(textwrap.dedent(HELLO_PY).replace("hello", "pwned"))
    changed = SkillSet.from_dir(tmp_path / "skills", semantic=False, config=load_config(), reporter=Reporter())
    assert "toolset.trust_changed" in changed.handle_tool_call("load_skill", {"name": "hello-extended"})


# --- seed 001: toolsets for every session -------------------------------------------------------


def test_session_toolsets_from_config_are_offered_in_every_session(packages):
    calc_skill(packages / "skills", toolsets="[]")
    config = Config(values={"runtime": {"session_toolsets": ["acme_tools.calc:Calculator"]}})
    skills = SkillSet.from_dir(packages / "skills", semantic=False, config=config, reporter=Reporter())
    assert "toolset___session__add" in offered(skills)  # before any skill is loaded
    assert skills.handle_tool_call("toolset___session__add", {"a": 2, "b": 3}) == "5"


def test_session_toolsets_must_name_classes(packages):
    calc_skill(packages / "skills", toolsets="[]")
    config = Config(values={"runtime": {"session_toolsets": ["acme_tools.*"]}})
    skills = SkillSet.from_dir(packages / "skills", semantic=False, config=config, reporter=Reporter())
    with pytest.raises(SkillctlError) as err:
        skills.tool_definitions()
    assert err.value.code == "runtime.config_invalid"
