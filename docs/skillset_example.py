"""Route a user's message to installed skills and build the agent's prompt (skillctl API)."""

from pathlib import Path

from skillctl import SkillSet

skill = Path(".agents/skills/k8s-deploy")  # one skill to route to (skillctl install puts them here)
skill.mkdir(parents=True, exist_ok=True)
(skill / "SKILL.md").write_text(
    "---\nname: k8s-deploy\ndescription: Deploy services to Kubernetes clusters with helm.\n---\n"
    "# Deploying\nRun helm upgrade.\n"
)

skills = SkillSet.discover()  # skills/, .agents/skills of this project, then ~/.agents/skills
history = ["Deploy the api to our Kubernetes cluster"]
message = "and for staging too"  # a fragment: routed together with the history

for match in skills.route(message, history=history):
    print(f"{match.name} {match.score:.2f}", "; ".join(match.reasons))

system_prompt = "You are a helpful agent.\n\n" + skills.prompt(message, history=history, tier="auto")
tools = skills.tool_definitions("anthropic")  # or "openai": load_skill, read_skill_file

# When the model calls a tool, hand the call back to the SkillSet:
reply = skills.handle_tool_call("load_skill", {"name": "k8s-deploy"})
print(reply.splitlines()[0])
print(skills.handle_tool_call("read_skill_file", {"name": "k8s-deploy", "path": "../../etc/passwd"}))
