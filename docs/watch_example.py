"""Live reload: skills added or edited while the agent runs reach routing; a running conversation
keeps the skills it started with."""
import threading
from pathlib import Path

from skillctl import SkillSet

skills = SkillSet.discover()
session = skills.session()  # this conversation's snapshot: names, versions, SKILL.md digests
reloaded = threading.Event()
watcher = skills.watch(on_reload=reloaded.set)  # a background thread; skills.close() stops it
watcher.wait_armed()

chess = Path(".agents/skills/chess")
chess.mkdir(parents=True, exist_ok=True)
(chess / "SKILL.md").write_text("---\nname: chess\ndescription: Play chess openings like the sicilian.\n---\ne4 c5\n")
reloaded.wait(timeout=5)

print([m.name for m in skills.route("play the sicilian")])  # ['chess']: no restart, no --reindex
print([record.name for record in session.snapshot.records()])  # the conversation's skills: unchanged
print(session.begin("play the sicilian"))  # []: chess arrives with the next session
skills.close()
