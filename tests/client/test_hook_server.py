"""The hook's warm helper: started by the first hook, answers the next ones over its socket,
exits when idle, and a dead or stale helper never changes what the hook prints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillctl import hook_server


def write_skill(root: Path, name: str, description: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps for {name}.\n"
    )


@pytest.fixture
def project(tmp_path, monkeypatch):
    # A short home: Unix socket paths are limited to ~100 characters.
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"sky-hook-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv("SKILLYARD_HOME", str(home))
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    monkeypatch.setenv("SKILLYARD_HOOK_HELPER", "1")
    monkeypatch.setenv("SKILLYARD_HOOK_IDLE_SECONDS", "4")
    root = tmp_path / "proj"
    write_skill(root / ".agents" / "skills", "pdf-tools", "Fill PDF forms, merge PDF files and extract text from PDFs.")
    yield root
    for pid in helper_pids(home):
        os.kill(pid, signal.SIGKILL)
    subprocess.run(["rm", "-rf", str(home)], check=False)


def helper_pids(home: Path) -> list[int]:
    found = subprocess.run(["pgrep", "-f", "skillctl hook serve"], capture_output=True, text=True).stdout.split()
    pids = []
    for pid in map(int, found):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if f"SKILLYARD_HOME={home}".encode() in environ.split(b"\0"):
            pids.append(pid)
    return pids


def event(project: Path, prompt: str = "merge these pdf files and fill the pdf forms") -> str:
    return json.dumps({"prompt": prompt, "cwd": str(project), "session_id": f"s-{time.monotonic_ns()}"})


def hook(text: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillctl", "hook", "claude"], input=text, capture_output=True, text=True, timeout=60
    )


def wait_for(predicate, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_first_hook_starts_the_helper_which_answers_the_next_and_exits_when_idle(project):
    first = hook(event(project))
    assert first.returncode == 0 and "pdf-tools" in first.stdout
    assert wait_for(lambda: hook_server.socket_path().exists()), "no helper started"
    answer = hook_server.ask(event(project))
    assert answer is not None and "pdf-tools" in answer["output"]
    assert json.loads(answer["output"])["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    second = hook(event(project))
    assert second.returncode == 0 and "pdf-tools" in second.stdout
    home = Path(os.environ["SKILLYARD_HOME"])
    assert len(helper_pids(home)) == 1  # the second hook found it: no second helper
    assert wait_for(lambda: not helper_pids(home) and not hook_server.socket_path().exists(), 15)


def test_helper_answers_nothing_for_a_message_that_needs_no_skill(project):
    hook(event(project))
    assert wait_for(lambda: hook_server.socket_path().exists())
    assert hook_server.ask(event(project, "thanks, that worked!")) == {"output": ""}
    assert hook(event(project, "thanks, that worked!")).stdout == ""


def test_helper_sees_a_skill_installed_after_it_started(project):
    hook(event(project))
    assert wait_for(lambda: hook_server.socket_path().exists())
    skills = project / ".agents" / "skills"
    write_skill(skills, "k8s-deploy", "Deploy services to Kubernetes clusters with kubectl and helm charts.")
    answer = hook_server.ask(event(project, "deploy the services to our kubernetes clusters with helm"))
    assert answer is not None and "k8s-deploy" in answer["output"]  # a new skill is seen at once


def test_a_killed_helper_falls_back_to_routing_in_process(project):
    hook(event(project))
    home = Path(os.environ["SKILLYARD_HOME"])
    assert wait_for(lambda: hook_server.socket_path().exists() and helper_pids(home))
    for pid in helper_pids(home):
        os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not helper_pids(home))
    assert hook_server.socket_path().exists()  # killed: its socket is stale
    assert hook_server.ask(event(project)) is None
    result = hook(event(project))
    assert result.returncode == 0 and "pdf-tools" in result.stdout
    assert wait_for(lambda: helper_pids(home)), "a new helper replaces the dead one"
    assert wait_for(lambda: hook_server.ask(event(project)) is not None)


def test_hook_with_the_helper_off_starts_none(project, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOOK_HELPER", "0")
    assert "pdf-tools" in hook(event(project)).stdout
    time.sleep(0.5)
    assert not helper_pids(Path(os.environ["SKILLYARD_HOME"]))


def test_a_malformed_event_is_reported_by_the_helper_without_killing_it(project):
    hook(event(project))
    assert wait_for(lambda: hook_server.socket_path().exists())
    assert "error" in hook_server.ask("{not json")
    result = hook("{not json")
    assert result.returncode == 0 and result.stdout == "" and "not JSON" in result.stderr
    assert hook_server.ask(event(project)) is not None
