"""A skill pipeline, driven by hand: what an agent loop does after each reply of the model."""

from pathlib import Path

from skillctl import SkillSet


def add_skill(name, frontmatter="", body="Steps."):  # the three skills this example uses
    folder = Path(".agents/skills", name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} step.\n{frontmatter}---\n{body}\n")


add_skill("gather", "next_skill: triage\n")
add_skill("triage", "conditional_next_skills:\n  - {when: the user reports a bug, skill: fix-bug}\n")
add_skill("fix-bug", body="Reproduce the bug first.")

skills = SkillSet.discover()
session = skills.session()  # keeps the skills installed now until it is closed
session.begin("the login page crashes when I press enter")  # a user message: depth starts at 0

session.activate("gather")  # or the model calls load_skill: gather is the active skill
transition = session.on_turn_end(had_tool_calls=False)  # gather's turn ended: next_skill
print(transition.source, "->", transition.target)  # gather -> triage; add transition.message

tools = [t["function"]["name"] for t in session.tool_definitions("openai")]
print("skill_transition" in tools)  # True: triage lists conditional next skills
reply = session.handle_tool_call("skill_transition", {"skill": "fix-bug", "reason": "a crash"})
print(session.active_skill, reply.splitlines()[0][:40])
print(session.handle_tool_call("skill_transition", {"skill": "deploy"}))  # refused, with a code
