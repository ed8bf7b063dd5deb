"""The skill_management tool: an agent looks after the installed skills; installs need a yes."""

import json
from pathlib import Path

from skillctl import SkillSet

for folder, name, text in [(".agents/skills/notes", "notes", "Notes."), ("vetted/weather", "weather", "Forecasts.")]:
    Path(folder).mkdir(parents=True, exist_ok=True)  # an installed skill, and one to install
    Path(folder, "SKILL.md").write_text(f"---\nname: {name}\ndescription: {text}\n---\nInstructions.\n")


def approve(request):  # your application asks its user; this one allows only vetted folders
    return request.action.value == "install" and request.source.startswith("./vetted/")


skills = SkillSet.discover(manage_skills=True, approve=approve)
manage = lambda **args: json.loads(skills.handle_tool_call("skill_management", args))  # noqa: E731

print(manage(action="disable", name="notes"))  # config.toml: [skills.notes] enabled = false
print([(s["name"], s["offered"]) for s in manage(action="list")["skills"]])
print(manage(action="enable", name="notes"))
print(manage(action="install", source="https://example.com/weather.zip")["error"])  # declined
print(manage(action="install", source="./vetted/weather")["changes"][0]["action"])
