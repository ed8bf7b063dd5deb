"""Toolsets: the trusted Python classes a skill names become tools while the skill is loaded."""

import sys
from pathlib import Path

from skillctl import SkillSet
from skillctl.config import Config

calc = Path(".agents/skills/calc")  # the skill, and the package acme_tools its toolset is in
calc.mkdir(parents=True, exist_ok=True)
(calc / "SKILL.md").write_text(
    '---\nname: calc\ndescription: Exact arithmetic.\ntoolsets: ["acme_tools.calc:Calculator"]\n---\nAdd up.\n'
)
Path("acme_tools").mkdir(exist_ok=True)
Path("acme_tools/__init__.py").write_text("")
Path("acme_tools/calc.py").write_text(
    'class Calculator:\n    def add(self, a: int, b: int) -> int:\n        """Add two whole numbers."""\n'
    "        return a + b\n"
)
sys.path.insert(0, str(Path.cwd()))  # a package you installed is on the path already

# config.toml would say: [runtime] trusted_toolsets = ["acme_tools.*"]; load_config() reads it.
skills = SkillSet.discover(config=Config(values={"runtime": {"trusted_toolsets": ["acme_tools.*"]}}))
print(skills.handle_tool_call("load_skill", {"name": "calc"}).splitlines()[-1])

tools = {t["function"]["name"]: t["function"] for t in skills.tool_definitions("openai")}
print(tools["toolset__calc__add"]["parameters"]["properties"])  # from the type hints
print(skills.handle_tool_call("toolset__calc__add", {"a": 2, "b": 3}))
print(skills.handle_tool_call("toolset__calc__add", {"a": 2}))  # a tool error the model can read
