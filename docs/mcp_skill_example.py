"""A skill's own MCP server: started when the model loads the skill, once the user trusted it."""
from skillctl import SkillSet
from skillctl.config import load_config

# Once, by the user: `skillctl mcp trust issues` shows the command and asks.
with SkillSet.discover(config=load_config()) as skills:  # the trust list is in the config
    skills.handle_tool_call("load_skill", {"name": "issues"})  # starts server.py
    tools = [t["function"]["name"] for t in skills.tool_definitions("openai")]
    print([name for name in tools if name.startswith("mcp__")])
    print(skills.handle_tool_call("mcp__issues__search", {"query": "crash on start"}))
