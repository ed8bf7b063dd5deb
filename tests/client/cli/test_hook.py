"""`skillctl hook claude` (Claude Code's UserPromptSubmit hook) and `skillctl hook install`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillctl.cli.main import main

PDF_SKILL = """---
name: pdf-tools
description: Merge, split and rotate PDF files. Use when the user wants to change the pages of a PDF.
---
# PDF tools

Run `python {baseDir}/scripts/rotate.py FILE ANGLE` to rotate pages.
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")  # lexical: exact and fast; semantic is covered below
    proj = tmp_path / "proj"
    folder = proj / ".agents" / "skills" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(PDF_SKILL)
    monkeypatch.chdir(tmp_path)  # the hook must use the event's cwd, not its own
    return proj


def run_hook(monkeypatch, capsys, prompt, *, cwd, session="s1", transcript=None):
    event = {"session_id": session, "cwd": str(cwd), "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
    if transcript:
        event["transcript_path"] = str(transcript)
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(event)))
    code = main(["hook", "claude"])
    out, err = capsys.readouterr()
    return code, (json.loads(out)["hookSpecificOutput"] if out.strip() else None), err


def test_a_prompt_that_needs_a_skill_gets_its_instructions(project, monkeypatch, capsys):
    code, output, _ = run_hook(monkeypatch, capsys, "rotate the pages of report.pdf by 90 degrees", cwd=project)
    assert code == 0 and output["hookEventName"] == "UserPromptSubmit"
    context = output["additionalContext"]
    assert "pdf-tools" in context and "keywords:" in context
    assert "semantic" not in context and "bm25" not in context  # words a model can use, not scores
    assert f"{project / '.agents/skills/pdf-tools'}/scripts/rotate.py" in context  # {baseDir} resolved


def test_the_same_session_gets_a_pointer_instead_of_a_second_copy(project, monkeypatch, capsys):
    run_hook(monkeypatch, capsys, "rotate the pages of report.pdf", cwd=project)
    _, again, _ = run_hook(monkeypatch, capsys, "rotate the pdf pages again", cwd=project)
    assert "rotate.py" not in again["additionalContext"]
    assert "'pdf-tools' skill applies again" in again["additionalContext"]
    _, other, _ = run_hook(monkeypatch, capsys, "rotate the pdf pages again", cwd=project, session="s2")
    assert "rotate.py" in other["additionalContext"]


def test_instructions_beyond_the_budget_become_a_path_to_read(project, monkeypatch, capsys):
    folder = project / ".agents" / "skills" / "pdf-forms"
    folder.mkdir()
    body = "Fill the PDF form fields one by one.\n" * 400  # ~14,000 characters
    (folder / "SKILL.md").write_text(
        "---\nname: pdf-forms\ndescription: Fill PDF form fields and rotate PDF pages of forms.\n---\n" + body
    )
    _, output, _ = run_hook(monkeypatch, capsys, "rotate the pdf pages and fill the pdf form fields", cwd=project)
    context = output["additionalContext"]
    assert len(context) < 10_000
    assert "rotate.py" in context  # the small skill, in full
    assert f"read {folder / 'SKILL.md'} before you start" in context and "one by one" not in context
    _, again, _ = run_hook(monkeypatch, capsys, "rotate the pdf pages and fill the pdf form fields", cwd=project)
    assert f"read {folder / 'SKILL.md'}" in again["additionalContext"]  # not given, so not "given earlier"


def test_small_talk_adds_nothing(project, monkeypatch, capsys):
    assert run_hook(monkeypatch, capsys, "thanks, that's all for now", cwd=project)[:2] == (0, None)


def test_a_continuation_is_routed_with_the_transcripts_previous_prompt(project, tmp_path, monkeypatch, capsys):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "rotate the pages of report.pdf"}}) + "\n"
    )
    assert (
        run_hook(monkeypatch, capsys, "and invoice.pdf too", cwd=project, session="s3", transcript=transcript)[1]
        is not None
    )
    assert run_hook(monkeypatch, capsys, "and invoice.pdf too", cwd=project, session="s4")[1] is None  # no history


def test_skills_in_claude_folders_are_routed_too(project, monkeypatch, capsys):
    folder = project / ".claude" / "skills" / "csv-report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: csv-report\ndescription: Summarise CSV spreadsheets into a weekly sales report.\n---\n# CSV\n"
    )
    _, output, _ = run_hook(monkeypatch, capsys, "summarise this csv into the weekly sales report", cwd=project)
    assert "csv-report" in output["additionalContext"]


@pytest.mark.parametrize("stdin", ["", "not json", '{"no_prompt": 1}'])
def test_a_bad_event_never_blocks_the_prompt(project, monkeypatch, capsys, stdin):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert main(["hook", "claude"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "skillctl hook claude" in err


def test_the_hook_routes_with_one_blas_thread_unless_the_user_chose(project, monkeypatch, capsys):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "")  # recorded, so the test leaves it as it found it
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    run_hook(monkeypatch, capsys, "rotate the pages of report.pdf", cwd=project)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    run_hook(monkeypatch, capsys, "rotate the pages of report.pdf", cwd=project)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_a_crash_while_routing_never_blocks_the_prompt(project, monkeypatch, capsys):
    from skillctl.skillset import SkillSet

    def broken(*args, **kwargs):
        raise RuntimeError("index exploded")

    monkeypatch.setattr(SkillSet, "discover", broken)
    code, output, err = run_hook(monkeypatch, capsys, "rotate report.pdf", cwd=project)
    assert (code, output) == (0, None) and "index exploded" in err


def test_install_writes_project_settings_once_and_reports_where(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["hook", "install", "claude", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["changed"] is True and first["settings"] == str(project / ".claude" / "settings.json")
    # Committed with the project: no machine's path in it.
    assert "skillctl hook claude" in first["command"] and "/" not in first["command"].replace(">/dev/null", "")
    assert main(["hook", "install", "claude", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] is False
    assert main(["hook", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)["claude"]
    assert status["project"]["installed"] is True and status["user"]["installed"] is False


def test_install_global_writes_the_users_settings(project, tmp_path, monkeypatch, capsys):
    assert main(["hook", "install", "claude", "-g", "--json"]) == 0
    command = json.loads(capsys.readouterr().out)["command"]
    assert "hook claude" in (tmp_path / "user" / ".claude" / "settings.json").read_text()
    assert command.split()[0].startswith("/")  # this machine's own settings: this skillctl, by path
    if " -m " in command:  # started as `python -m`: the package, whose __main__ has the hook's fast path
        assert command.endswith(" -m skillctl hook claude")


def test_install_refuses_broken_settings_with_a_hint(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{oops")
    assert main(["hook", "install", "claude"]) == 1
    assert "hook install claude" in capsys.readouterr().err
    assert (project / ".claude" / "settings.json").read_text() == "{oops"


def test_the_installed_command_runs_as_claude_code_would_run_it(project, tmp_path, monkeypatch, capsys):
    """The real binary, the command line written to settings.json, the event on stdin, semantic
    routing as installed (the default)."""
    env = {k: v for k, v in os.environ.items() if k != "SKILLYARD_SEMANTIC"}
    skillctl = Path(sys.executable).parent / "skillctl"
    installed = subprocess.run(
        [str(skillctl), "hook", "install", "claude", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
        check=True,
    )
    command = json.loads(installed.stdout)["command"]
    event = {"session_id": "real", "cwd": str(project), "prompt": "please rotate the pages of my pdf"}
    on_path = {**env, "PATH": f"{skillctl.parent}:/usr/bin:/bin"}
    done = subprocess.run(
        command,
        shell=True,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=on_path,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "rotate.py" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    # A teammate without skillctl: no output, no error on every prompt.
    absent = subprocess.run(
        command,
        shell=True,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env={**env, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=60,
    )
    assert (absent.returncode, absent.stdout, absent.stderr) == (0, "", "")
