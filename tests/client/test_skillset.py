"""The SkillSet API, the CLI batch form over a small dir, and --ask under a real terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillctl import SkillSet

SKILLS = {
    "k8s-deploy": "Deploy services to Kubernetes clusters with kubectl and helm charts.",
    "pdf-tools": "Fill PDF forms, merge PDF files and extract text from PDF documents.",
    "sql-analyst": "Write and optimise SQL queries for PostgreSQL databases.",
}


@pytest.fixture
def skills_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    for name, description in SKILLS.items():
        folder = tmp_path / "skills" / ("." if name == "pdf-tools" else "") / "group" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n")
    return tmp_path / "skills"


def test_discover_route_prompt(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    assert sorted(skills.names) == sorted(SKILLS)
    [match] = skills.route("merge these pdf files and fill the pdf forms")
    assert match.name == "pdf-tools" and match.reasons
    assert '<skill name="pdf-tools"' in skills.prompt("merge these pdf files and fill the pdf forms")
    assert skills.tool_definitions("anthropic")[0]["name"] == "load_skill"


def test_history_joins_a_fragmented_message(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    assert skills.route("and for staging too") == []
    routed = skills.route("and for staging too", history=["deploy the services to kubernetes clusters"])
    assert [m.name for m in routed] == ["k8s-deploy"]


def test_index_is_reused_and_reindexed_on_change(skills_dir):
    SkillSet.from_dir(skills_dir, semantic=False)
    skill_md = next(skills_dir.rglob("sql-analyst/SKILL.md"))
    skill_md.write_text("---\nname: sql-analyst\ndescription: Bake sourdough bread at home.\n---\n")
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    assert [m.name for m in skills.route("bake sourdough bread at home")] == ["sql-analyst"]


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "skillctl", *args], capture_output=True, text=True, env=env)


def test_cli_batch_form_prints_one_line_per_query_in_order(skills_dir, tmp_path):
    queries = tmp_path / "q.jsonl"
    rows = ["optimise this postgresql sql query", "hello there", "deploy services to kubernetes clusters"]
    queries.write_text("".join(json.dumps({"query": q}) + "\n" for q in rows))
    result = run_cli("route", "--queries", str(queries), "--skills-dir", str(skills_dir), "--json", "--no-semantic")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["query"] for line in lines] == rows
    assert [[s["name"] for s in line["skills"]] for line in lines] == [["sql-analyst"], [], ["k8s-deploy"]]
    assert set(lines[0]["skills"][0]) == {"name", "score", "reasons"}


def test_cli_route_with_no_skills_says_where_it_looked(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("route", "rotate this pdf", "--skills-dir", str(empty), "--no-semantic")
    assert result.returncode == 0 and result.stdout == ""
    assert f"no skills found in {empty}" in result.stderr and "skillctl install" in result.stderr


def test_cli_route_explain_names_the_skills_left_out_and_why(tmp_path):
    folder = tmp_path / "s" / "win-only"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: win-only\ndescription: Tweak the Windows registry.\nos: [win32]\n---\n# w\n"
    )
    result = run_cli(
        "route",
        "tweak the windows registry",
        "--skills-dir",
        str(tmp_path / "s"),
        "--no-semantic",
        "--explain",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stdout)
    assert line["skills"] == [] and line["left_out"][0]["name"] == "win-only"
    assert "win32" in line["left_out"][0]["reason"] and "not offered: win-only" in result.stderr


def test_cli_route_without_message_is_a_usage_error(skills_dir):
    assert run_cli("route", "--skills-dir", str(skills_dir)).returncode == 2


def ask(skills_dir: Path, answers: list[str], env: dict) -> str:
    """Run `skillctl route --ask` under a pseudo-terminal, typing each answer at each prompt."""
    cmd = [
        sys.executable,
        "-m",
        "skillctl",
        "route",
        "--ask",
        "--no-semantic",
        "--skills-dir",
        str(skills_dir),
        "merge these pdf files and fill the pdf forms",
    ]
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, cmd, env)
    output, pending, deadline = b"", list(answers), time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if pending and output.count(b"[Y/n/a/?]") > len(answers) - len(pending):
            os.write(fd, (pending.pop(0) + "\n").encode())
    os.waitpid(pid, 0)
    return output.decode(errors="replace").replace("\r", "")


@pytest.fixture
def tty_env(skills_dir, tmp_path):
    return {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_SESSION": "test-session",
        "NO_COLOR": "1",
    }


def test_ask_yes_loads(skills_dir, tty_env):
    out = ask(skills_dir, ["y"], tty_env)
    assert "Load 'pdf-tools' skill (~" in out and out.rstrip().endswith("pdf-tools")


def test_ask_no_declines(skills_dir, tty_env):
    out = ask(skills_dir, ["n"], tty_env)
    assert "Load 'pdf-tools'" in out and not out.rstrip().endswith("pdf-tools")


def test_ask_question_mark_shows_matched_terms_then_asks_again(skills_dir, tty_env):
    out = ask(skills_dir, ["?", "y"], tty_env)
    assert "matched" in out and "keywords: " in out and "pdf" in out
    assert out.count("[Y/n/a/?]") == 2


def test_ask_always_remembers_for_the_session(skills_dir, tty_env):
    ask(skills_dir, ["a"], tty_env)
    again = ask(skills_dir, [], tty_env)
    assert "[Y/n/a/?]" not in again and "approved for this session" in again
    other = ask(skills_dir, ["n"], {**tty_env, "SKILLYARD_SESSION": "another"})
    assert "[Y/n/a/?]" in other
