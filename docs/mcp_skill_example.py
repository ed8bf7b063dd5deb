"""A skill's own MCP server: started when the model loads the skill, its tools offered next."""
from skillctl import SkillSet

with SkillSet.discover() as skills:  # leaving the block stops the servers
    skills.handle_tool_call("load_skill", {"name": "issues"})  # starts server.py
    tools = [t["function"]["name"] for t in skills.tool_definitions("openai")]
    print([name for name in tools if name.startswith("mcp__")])
    print(skills.handle_tool_call("mcp__issues__search", {"query": "crash on start"}))
