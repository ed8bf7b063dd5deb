"""Discovery: project over user over extra folders; every skill folder under a tree."""

from __future__ import annotations

from pathlib import Path

from skillctl.discovery import discover, scan_tree


def make_skill(folder: Path, name: str, description: str = "A test skill.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
    return folder


def test_scan_tree_finds_hidden_folders_and_skips_git_and_node_modules(tmp_path):
    make_skill(tmp_path / "a", "a")
    make_skill(tmp_path / ".hidden" / "b", "b")
    make_skill(tmp_path / "deep" / "er" / "c", "c")
    make_skill(tmp_path / ".git" / "d", "d")
    make_skill(tmp_path / "x" / "node_modules" / "e", "e")
    assert [p.name for p in scan_tree(tmp_path)] == ["b", "a", "c"]


def test_scan_tree_does_not_descend_into_a_skill(tmp_path):
    make_skill(tmp_path / "a", "a")
    make_skill(tmp_path / "a" / "references" / "example", "example")
    assert scan_tree(tmp_path) == [tmp_path / "a"]


def test_scan_tree_follows_symlinked_skills_without_looping(tmp_path):
    real = make_skill(tmp_path / "store" / "linked", "linked")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "linked").symlink_to(real)
    (tmp_path / "skills" / "loop").symlink_to(tmp_path / "skills")
    assert (tmp_path / "skills" / "linked") in scan_tree(tmp_path / "skills")


def test_project_overrides_user_overrides_extra_and_collisions_are_reported(tmp_path, monkeypatch):
    project, user, extra = tmp_path / "proj", tmp_path / "user", tmp_path / "extra"
    make_skill(project / ".agents" / "skills" / "deploy", "deploy", "project copy")
    make_skill(user / "deploy", "deploy", "user copy")
    make_skill(user / "lint", "lint", "user lint")
    make_skill(extra / "lint", "lint", "extra lint")
    make_skill(extra / "fmt", "fmt")
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(user))
    found = discover(project_dir=project, extra_dirs=[extra])
    by_name = {s.name: s for s in found.skills}
    assert sorted(by_name) == ["deploy", "fmt", "lint"]
    assert by_name["deploy"].scope == "project" and by_name["deploy"].manifest.description == "project copy"
    assert by_name["lint"].scope == "user"
    assert {c.name: c.shadowed for c in found.collisions} == {
        "deploy": [user / "deploy"],
        "lint": [extra / "lint"],
    }


def test_folder_without_usable_frontmatter_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "none"))
    bad = tmp_path / "p" / ".agents" / "skills" / "bad"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no frontmatter here")
    assert discover(project_dir=tmp_path / "p").skills == []


def test_workspace_over_project_over_user_over_bundled_over_extra(tmp_path, monkeypatch):
    """Seeds 002 and 004: a workspace `skills/` folder and `.agent/skills` are read, and a host's
    bundled skills sit between the user's and the configured extra folders."""
    project, user, bundled, extra = (tmp_path / n for n in ("proj", "user", "bundled", "extra"))
    make_skill(project / "skills" / "deploy", "deploy", "workspace copy")
    make_skill(project / ".agents" / "skills" / "deploy", "deploy", "project copy")
    make_skill(project / ".agent" / "skills" / "notes", "notes", "singular project folder")
    make_skill(user / "notes", "notes", "user copy")
    make_skill(user / "lint", "lint", "user copy")
    make_skill(bundled / "lint", "lint", "bundled copy")
    make_skill(bundled / "greet", "greet", "bundled copy")
    make_skill(extra / "greet", "greet", "extra copy")
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(user))
    found = discover(project_dir=project, extra_dirs=[extra], bundled_dirs=[bundled])
    by_name = {s.name: (s.scope, s.manifest.description) for s in found.skills}
    assert by_name == {
        "deploy": ("workspace", "workspace copy"),
        "notes": ("project", "singular project folder"),
        "lint": ("user", "user copy"),
        "greet": ("bundled", "bundled copy"),
    }
    shadowed = {c.name: c.shadowed for c in found.collisions}
    assert shadowed["deploy"] == [project / ".agents" / "skills" / "deploy"]
    assert shadowed["greet"] == [extra / "greet"]


def test_user_scope_reads_the_singular_agent_folder_too(tmp_path, monkeypatch):
    monkeypatch.delenv("SKILLYARD_USER_SKILLS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    make_skill(tmp_path / "home" / ".agent" / "skills" / "todo", "todo")
    found = discover(project_dir=tmp_path / "proj")
    assert [(s.name, s.scope) for s in found.skills] == [("todo", "user")]


def test_skillset_takes_the_hosts_bundled_skills(tmp_path, monkeypatch):
    from skillctl import SkillSet

    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "none"))
    make_skill(tmp_path / "app" / "bundled" / "greet", "greet", "Say hello to people.")
    skills = SkillSet.discover(
        project_dir=tmp_path / "proj", bundled_dirs=[tmp_path / "app" / "bundled"], semantic=False
    )
    assert skills.names == ["greet"] and skills.entry("greet").scope == "bundled"
