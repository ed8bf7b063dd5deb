"""An agent on any OpenAI-compatible server: routing, skills as tools, pipelines, the tool policy."""

import os
from pathlib import Path

from skillctl import SkillSet
from skillctl.config import load_config
from skillctl.runtime.agent_loop import OpenAIChat, run_turn

for name, frontmatter in [  # the pipeline this example runs: intake -> triage -> fix-bug
    ("intake", "next_skill: triage\n"),
    ("triage", "conditional_next_skills:\n  - {when: the user reports a bug, skill: fix-bug}\n"),
    ("fix-bug", ""),
]:
    Path(".agents/skills", name).mkdir(parents=True, exist_ok=True)
    Path(".agents/skills", name, "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} step of support.\n{frontmatter}---\nDo the {name} step.\n"
    )

model = OpenAIChat(os.environ["OPENAI_BASE_URL"], model="gpt-4o-mini", api_key=os.environ.get("OPENAI_API_KEY"))

with SkillSet.discover(config=load_config()) as skills:  # leaving the block ends the session
    session = skills.session()
    messages = [{"role": "system", "content": "You are a support agent.\n\n" + skills.prompt(tier="catalog")}]
    result = run_turn(session, messages, "the login page crashes when I press enter", model)
    print(result.reply)
    print(" -> ".join(["intake", *(t.target for t in result.transitions)]))  # the pipeline it went through
