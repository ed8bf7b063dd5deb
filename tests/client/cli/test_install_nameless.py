"""Seed 003: a skill without ``name:`` installs under its folder's name, with a warning, and
does not stop the other skills of the same ``skillctl install a b c`` (issue 36 item 6)."""

from __future__ import annotations


def write_skill(folder, front: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}description: The {folder.name} skill.\n---\n\nDo it.\n")


def test_install_of_several_skills_names_a_nameless_one_after_its_folder(cli, tmp_path):
    src = tmp_path / "src"
    write_skill(src / "alpha", "")
    write_skill(src / "beta", "name: beta\n")
    done = cli("install", str(src / "alpha"), str(src / "beta"))
    assert done.returncode == 0, done.stderr
    skills = cli.project / ".agents" / "skills"
    assert sorted(p.name for p in skills.iterdir()) == ["alpha", "beta"]
    assert "[name.from_folder]" in done.stderr
    listed = cli("check", "alpha", "--json")
    assert listed.returncode == 0 and '"name": "alpha"' in listed.stdout
