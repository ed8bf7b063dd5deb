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


def test_a_hook_never_loads_the_cli_cold_or_answered_by_the_helper(project):
    # skillctl.cli.launch runs the hook (the helper's answer, or routing here) without click
    code = (
        "import sys; sys.argv = ['skillctl', 'hook', 'claude']; from skillctl.cli.launch import main; rc = main(); "
        "sys.stderr.write('cli loaded: %s' % ('click' in sys.modules)); sys.exit(rc)"
    )
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, input=event(project), capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and "pdf-tools" in first.stdout and "cli loaded: False" in first.stderr
    assert wait_for(lambda: hook_server.socket_path().exists())
    warm = subprocess.run(run, input=event(project), capture_output=True, text=True, timeout=60)
    assert warm.returncode == 0 and "cli loaded: False" in warm.stderr
    assert json.loads(warm.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "pdf-tools" in warm.stdout
    chat = subprocess.run(run, input=event(project, "thanks, that worked!"), capture_output=True, text=True, timeout=60)
    assert chat.stdout == "" and "cli loaded: False" in chat.stderr


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


# --- the helper's skill sets, kept between prompts (in process) ------------------------------


def gated_skill(project: Path, name: str, description: str, gate: str, needs: str) -> None:
    """A project skill that requires one thing (``gate`` is ``bins`` or ``env``)."""
    folder = project / ".agents" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\nrequires:\n  {gate}: [{needs}]\n---\n# {name}\n"
    )


def kept_output(kept, project: Path, prompt: str) -> str:
    from skillctl.cli.app import App
    from skillctl.cli.commands.hook import _event_output

    return _event_output(App(), event(project, prompt), kept)


def test_a_kept_skill_set_keeps_its_router_while_nothing_changes(project, monkeypatch):
    from skillctl.cli.app import App
    from skillctl.cli.commands.hook import _KeptSkillSets

    monkeypatch.setenv("HOME", str(project.parent / "user"))
    kept = _KeptSkillSets()
    assert "pdf-tools" in kept_output(kept, project, "merge these pdf files and fill the pdf forms")
    skills = kept.get(App(), project)
    router = skills.router()
    assert "pdf-tools" in kept_output(kept, project, "extract the text from this pdf file and merge it")
    assert kept.get(App(), project) is skills and skills.router() is router  # nothing rebuilt


def test_a_kept_skill_set_sees_a_binary_installed_after_it_was_made(project, monkeypatch):
    from skillctl.cli.commands.hook import _KeptSkillSets

    bin_dir = project.parent / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(project.parent / "user"))
    gated_skill(
        project,
        "k8s-deploy",
        "Deploy services to Kubernetes clusters with kubectl and helm.",
        "bins",
        "skyhook-kubectl",
    )
    kept = _KeptSkillSets()
    prompt = "deploy the services to our kubernetes clusters with helm and kubectl"
    assert "k8s-deploy" not in kept_output(kept, project, prompt)  # its binary is missing here
    tool = bin_dir / "skyhook-kubectl"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert "k8s-deploy" in kept_output(kept, project, prompt)  # same PATH, the gate checked again


def test_kept_skill_sets_are_one_per_place_and_config_and_few(project, monkeypatch, tmp_path):
    from skillctl.cli.app import App
    from skillctl.cli.commands.hook import _KeptSkillSets

    monkeypatch.setenv("HOME", str(project.parent / "user"))
    kept = _KeptSkillSets(size=2)
    first = kept.get(App(), project)
    monkeypatch.setenv("SOME_AGENT_PROMPT_ID", "42")  # what else an agent's environment carries
    assert kept.get(App(), project) is first
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "1")  # how routing runs
    second = kept.get(App(), project)
    assert second is not first
    config = Path(os.environ["SKILLYARD_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('skill_dirs = ["/nowhere"]\n')
    assert kept.get(App(), project) is not second  # the config
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    kept.get(App(), other)
    assert len(kept._sets) == 2  # the least recently used one is dropped


def test_a_kept_skill_set_sees_a_variable_a_skill_requires_set_later(project, monkeypatch):
    from skillctl.cli.commands.hook import _KeptSkillSets

    monkeypatch.setenv("HOME", str(project.parent / "user"))
    monkeypatch.delenv("SKYHOOK_WEATHER_KEY", raising=False)
    gated_skill(project, "weather-report", "Fetch the weather forecast for a city.", "env", "SKYHOOK_WEATHER_KEY")
    kept = _KeptSkillSets()
    prompt = "fetch the weather forecast for oslo"
    assert "weather-report" not in kept_output(kept, project, prompt)
    monkeypatch.setenv("SKYHOOK_WEATHER_KEY", "k")
    assert "weather-report" in kept_output(kept, project, prompt)  # the same set, its gates checked again
