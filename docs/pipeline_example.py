"""A skill pipeline, driven by hand: what an agent loop does after each reply of the model."""
from skillctl import SkillSet

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
