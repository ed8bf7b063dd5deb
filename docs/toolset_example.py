"""Toolsets: the trusted Python classes a skill names become tools while the skill is loaded."""
from skillctl import SkillSet
from skillctl.config import load_config

# SKILL.md of calc:  toolsets: ["acme_tools.calc:Calculator"]
# config.toml:       [runtime]
#                    trusted_toolsets = ["acme_tools.*"]
skills = SkillSet.discover(config=load_config())  # a SkillSet reads only the config it is given
print(skills.handle_tool_call("load_skill", {"name": "calc"}).splitlines()[-1])

tools = {t["function"]["name"]: t["function"] for t in skills.tool_definitions("openai")}
print(tools["toolset__calc__add"]["parameters"]["properties"])  # from the type hints
print(skills.handle_tool_call("toolset__calc__add", {"a": 2, "b": 3}))
print(skills.handle_tool_call("toolset__calc__add", {"a": 2}))  # a tool error the model can read
