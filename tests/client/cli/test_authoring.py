"""skillctl init / validate / pack / migrate: exit codes, --json shape, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillctl.cli.main import main

SKILLCTL = Path(sys.executable).with_name("skillctl")
GOOD = "---\nname: demo\ndescription: Does a thing.\nlicense: MIT\nversion: 1.0.0\n---\n# Demo\n"
INLINE = '---\nname: demo\ndescription: d\nmetadata: {"openclaw":{"emoji":"x"}}\n---\n# body\r\n'


def make_skill(root: Path, text: str = GOOD, name: str = "demo") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text, newline="")
    return folder


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


# --- validate -------------------------------------------------------------------------------------
def test_validate_valid_skill_exits_0(tmp_path, capsys):
    code, out, err = run(capsys, "validate", str(make_skill(tmp_path)))
    assert code == 0 and "valid" in out


def test_validate_json_is_one_object_per_path_in_order(tmp_path, capsys):
    good = make_skill(tmp_path)
    bad = make_skill(tmp_path, "---\nname: Bad\n---\n", name="bad")
    code, out, _ = run(capsys, "validate", "--json", str(good), str(bad), "missing-dir")
    assert code == 1
    lines = json_lines(out)
    assert [line["path"] for line in lines] == [str(good), str(bad), "missing-dir"]
    assert [line["valid"] for line in lines] == [True, False, False]
    assert set(lines[0]) == {"path", "valid", "name", "version", "errors", "warnings"}
    assert lines[0]["name"] == "demo" and lines[0]["version"] == "1.0.0"
    assert {e["code"] for e in lines[1]["errors"]} >= {"name.pattern", "description.missing"}
    assert set(lines[1]["errors"][0]) == {"code", "message", "location"}
    assert lines[2]["errors"][0]["code"] == "skill.not_found"


def test_validate_without_paths_is_a_usage_error(capsys):
    code, _, err = run(capsys, "validate")
    assert code == 2 and "hint" in err


def test_validate_strict(tmp_path, capsys):
    folder = make_skill(tmp_path)
    assert run(capsys, "validate", str(folder))[0] == 0
    code, out, _ = run(capsys, "validate", "--strict", "--json", str(folder))
    assert code == 1 and json_lines(out)[0]["errors"][0]["code"] == "spec.extension_field"


def test_validate_codes_lists_every_code(capsys):
    from skillctl.format.findings import CODES

    code, out, _ = run(capsys, "validate", "--codes", "--json")
    assert code == 0 and json.loads(out) == CODES


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe\x00junk", b"---\n", b"---\n- [a\n---\n", b"---\na: &a [*a]\n---\n", b"\x1f\x8b\x08garbage"],
)
@pytest.mark.parametrize("filename", ["SKILL.md", "x.zip", "x.tar.gz"])
def test_broken_input_never_gives_a_traceback(tmp_path, content, filename):
    path = tmp_path / filename
    path.write_bytes(content)
    proc = subprocess.run([str(SKILLCTL), "validate", "--json", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert json_lines(proc.stdout)[0]["valid"] is False


def test_real_binary_runs_validate(tmp_path):
    folder = make_skill(tmp_path)
    proc = subprocess.run(
        [str(SKILLCTL), "validate", "--json", str(folder)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["valid"] is True


# --- init -------------------------------------------------------------------------------------------
def test_init_skeleton_is_refused_until_its_placeholder_description_and_body_are_replaced(tmp_path, capsys):
    code, _, _ = run(capsys, "init", "my-skill", "--path", str(tmp_path))
    folder = tmp_path / "my-skill"
    assert code == 0 and (folder / "scripts").is_dir() and (folder / "references").is_dir()
    code, out, _ = run(capsys, "validate", "--json", str(folder))
    line = json_lines(out)[0]
    assert code == 1 and [e["code"] for e in line["errors"]] == ["description.placeholder", "body.placeholder"]

    skill_md = folder / "SKILL.md"
    text = skill_md.read_text().splitlines()
    text[2] = "description: Greets a person by name. Use when the user asks for a greeting."
    skill_md.write_text("\n".join(text) + "\n")
    code, out, _ = run(capsys, "validate", "--json", str(folder))
    assert code == 1 and [e["code"] for e in json_lines(out)[0]["errors"]] == ["body.placeholder"]

    skill_md.write_text("\n".join(text[:7]) + "\n\n# My skill\n\nGreet the person by the name they gave.\n")
    code, out, _ = run(capsys, "validate", "--strict", "--json", str(folder))
    line = json_lines(out)[0]
    # The skeleton passes the specification literally: its version sits under metadata.
    assert code == 0 and line["valid"] and line["version"] == "0.1.0" and line["warnings"] == []


def test_validate_flags_linked_files_the_skill_does_not_have(tmp_path, capsys):
    body = (
        "# Demo\nRead [the API](references/api.md) and [the guide](references/guide.md#setup).\n"
        "Run `[not a link](scripts/x.py)`; see [the site](https://example.com) and [top](#demo).\n"
        "```\n[fenced](nowhere.md)\n```\n"
    )
    folder = make_skill(tmp_path, GOOD.replace("# Demo\n", body))
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("api")
    code, out, _ = run(capsys, "validate", "--json", str(folder))
    line = json_lines(out)[0]
    assert code == 0
    assert [(w["code"], "references/guide.md" in w["message"]) for w in line["warnings"]] == [("link.missing", True)]
    archive = tmp_path / "demo.zip"
    assert run(capsys, "pack", str(folder), "-o", str(archive))[0] == 0
    code, out, _ = run(capsys, "validate", "--json", str(archive))
    assert [w["code"] for w in json_lines(out)[0]["warnings"]] == ["link.missing"]


def test_validate_counts_read_in_the_singular_and_plural(tmp_path, capsys):
    folder = make_skill(
        tmp_path,
        GOOD.replace(
            "description: Does a thing.", "description: Describe what demo does and when an agent should use it"
        ),
    )
    _, out, _ = run(capsys, "validate", str(folder))
    assert "1 error, 0 warnings" in out


def test_pack_defaults_to_name_version_zip_beside_not_inside_the_skill(tmp_path, capsys, monkeypatch):
    folder = make_skill(tmp_path)
    monkeypatch.chdir(folder)
    code, out, err = run(capsys, "pack", ".")
    assert code == 0 and (tmp_path / "demo-1.0.0.zip").is_file() and not list(folder.glob("*.zip"))
    assert "packed 1 file, " in out + err  # one SKILL.md: "1 file", not "1 files"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo-1.0.0.zip").unlink()
    assert run(capsys, "pack", "demo")[0] == 0 and (tmp_path / "demo-1.0.0.zip").is_file()


@pytest.mark.parametrize("name", ["Bad", "a--b", "-x", "x" * 65, "has space"])
def test_init_refuses_invalid_names(tmp_path, capsys, name):
    assert run(capsys, "init", name, "--path", str(tmp_path))[0] == 2
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_an_existing_non_empty_folder(tmp_path, capsys):
    make_skill(tmp_path)
    code, _, err = run(capsys, "init", "demo", "--path", str(tmp_path))
    assert code == 1 and "hint" in err
    assert (tmp_path / "demo" / "SKILL.md").read_text() == GOOD


# --- pack -------------------------------------------------------------------------------------------
def test_pack_prints_sha256_and_is_reproducible(tmp_path, capsys):
    folder = make_skill(tmp_path)
    code, out, _ = run(capsys, "pack", str(folder), "-o", str(tmp_path / "a.zip"), "--json")
    assert code == 0
    first = json_lines(out)[0]
    (folder / "SKILL.md").touch()
    run(capsys, "pack", str(folder), "-o", str(tmp_path / "b.zip"), "--json")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    assert len(first["sha256"]) == 64


def test_pack_refuses_an_invalid_skill(tmp_path, capsys):
    folder = make_skill(tmp_path, "---\nname: Bad\ndescription: d\n---\n")
    code, _, err = run(capsys, "pack", str(folder), "-o", str(tmp_path / "x.zip"))
    assert code == 1 and "name.pattern" in err
    assert not (tmp_path / "x.zip").exists()


def test_pack_of_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    assert run(capsys, "pack", str(tmp_path / "nope"), "-o", str(tmp_path / "x.zip"))[0] == 2


# --- migrate ------------------------------------------------------------------------------------------
def test_migrate_dry_run_prints_a_diff_and_writes_nothing(tmp_path, capsys):
    folder = make_skill(tmp_path, INLINE)
    before = (folder / "SKILL.md").read_bytes()
    code, out, _ = run(capsys, "migrate", "--dry-run", str(folder))
    assert code == 0 and out.startswith("---") and '-metadata: {"openclaw"' in out and "+  openclaw:" in out
    assert (folder / "SKILL.md").read_bytes() == before


def test_migrate_rewrites_then_refuses_a_second_time(tmp_path, capsys):
    folder = make_skill(tmp_path, INLINE)
    assert run(capsys, "migrate", str(folder / "SKILL.md"))[0] == 0
    data = (folder / "SKILL.md").read_bytes()
    assert b"metadata:\n  openclaw:\n    emoji: x\n" in data and data.endswith(b"---\n# body\r\n")
    code, _, err = run(capsys, "migrate", str(folder))
    assert code == 1 and "hint" in err


def test_migrate_missing_path_is_an_error_not_a_traceback(tmp_path, capsys):
    code, _, err = run(capsys, "migrate", str(tmp_path / "nope"))
    assert code == 1 and "Traceback" not in err


def test_init_with_description_and_instructions_validates_at_once(tmp_path, capsys):
    steps = tmp_path / "steps.md"
    steps.write_text("# Greeter\n\nGreet the person by name.\n")
    code, _, _ = run(
        capsys,
        "init",
        "greeter",
        "--path",
        str(tmp_path),
        "--description",
        "Greets people.",
        "--instructions",
        f"@{steps}",
    )
    assert code == 0 and "Greet the person by name." in (tmp_path / "greeter" / "SKILL.md").read_text()
    assert run(capsys, "validate", "--strict", str(tmp_path / "greeter"))[0] == 0
    missing = run(capsys, "init", "other", "--path", str(tmp_path), "--instructions", "@/nonexistent/zq.md")
    assert missing[0] == 2 and "cannot read /nonexistent/zq.md" in missing[2]
