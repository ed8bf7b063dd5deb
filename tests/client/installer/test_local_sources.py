"""Installing from a folder, an archive, a URL (local HTTP server) and a git repository."""

from __future__ import annotations

import functools
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import tests.client.installer.fakes as F  # noqa: E402
from skillctl.config import Config
from skillctl.errors import ExitCode, SkillctlError
from skillctl.installer import Operations
from skillctl.installer.project import Scope, read_lock, read_manifest


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user/.agents/skills"))
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def ops(root: Path, force: bool = False) -> Operations:
    return Operations.for_scope(Scope.project(root), config=Config(), force=force)


def installed_version(root: Path, name: str) -> str:
    return (root / f".agents/skills/{name}/SKILL.md").read_text().split("Version ")[1].split()[0]


def test_install_from_folder_records_relative_path_and_reinstalls(proj):
    folder = F.make_skill(proj / "vendor", "notes", "1.0.0", files={"scripts/run.py": "print(1)\n"})
    [change] = ops(proj).install(["./vendor/notes-1.0.0"])
    assert change.action == "installed"
    assert (proj / ".agents/skills/notes/scripts/run.py").exists()
    assert read_manifest(proj / "skills.toml")["notes"].source == {"path": "vendor/notes-1.0.0"}
    lock = read_lock(proj / "skills.lock")["notes"]
    assert len(lock.sha256) == 64 and set(lock.files) == {"SKILL.md", "scripts/run.py"}
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text().replace("Version 1.0.0", "Version 1.0.1"))
    [upd] = ops(proj).update(["notes"])
    assert upd.action == "updated" and installed_version(proj, "notes") == "1.0.1"


@pytest.mark.parametrize("suffix", [".zip", ".tar.gz"])
def test_install_from_archive_file(proj, suffix):
    from skillctl.format import pack_skill

    folder = F.make_skill(proj / "src", "fmt", "2.0.0")
    archive = proj / f"fmt{suffix}"
    pack_skill(folder, archive)
    ops(proj).install([archive.name])
    assert installed_version(proj, "fmt") == "2.0.0"
    assert read_manifest(proj / "skills.toml")["fmt"].source == {"archive": f"fmt{suffix}"}
    shutil.rmtree(proj / ".agents")
    ops(proj).sync(frozen=True)
    assert installed_version(proj, "fmt") == "2.0.0"


def test_changed_archive_is_an_integrity_error_for_frozen_install(proj):
    from skillctl.format import pack_skill

    pack_skill(F.make_skill(proj / "a", "fmt", "1.0.0"), proj / "fmt.zip")
    ops(proj).install(["fmt.zip"])
    pack_skill(F.make_skill(proj / "b", "fmt", "1.0.1"), proj / "fmt.zip")
    shutil.rmtree(proj / ".agents")
    with pytest.raises(SkillctlError) as err:
        ops(proj).sync(frozen=True)
    assert err.value.exit_code == ExitCode.INTEGRITY
    assert not (proj / ".agents/skills/fmt").exists()


@pytest.fixture
def http_dir(tmp_path):
    served = tmp_path / "www"
    served.mkdir()
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_install_from_url(proj, http_dir):
    from skillctl.format import pack_skill

    served, base = http_dir
    pack_skill(F.make_skill(proj / "src", "pdf", "3.1.0"), served / "pdf.tar.gz")
    ops(proj).install([f"{base}/pdf.tar.gz"])
    assert installed_version(proj, "pdf") == "3.1.0"
    assert read_manifest(proj / "skills.toml")["pdf"].source == {"url": f"{base}/pdf.tar.gz"}
    (served / "pdf.tar.gz").write_bytes(b"not an archive any more")
    shutil.rmtree(proj / ".agents")
    ops(proj).sync(frozen=True)  # served from the cache by sha256
    assert installed_version(proj, "pdf") == "3.1.0"


def test_url_serving_garbage_installs_nothing(proj, http_dir):
    served, base = http_dir
    (served / "bad.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(SkillctlError) as err:
        ops(proj).install([f"{base}/bad.zip"])
    assert err.value.code == "install.archive_refused"
    assert not (proj / ".agents/skills").exists() or not any((proj / ".agents/skills").iterdir())


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "HOME": str(repo),
            "PATH": "/usr/bin:/bin",
        },
    ).stdout


@pytest.fixture
def git_repo(tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    skill = F.make_skill(repo / "skills", "review", "1.0.0")
    skill.rename(repo / "skills/review")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "v1")
    _git(repo, "tag", "v1")
    return repo


def _bump(repo: Path, version: str) -> None:
    md = repo / "skills/review/SKILL.md"
    md.write_text(F.SKILL_MD.format(name="review", version=version))
    _git(repo, "commit", "-qam", version)


def test_install_from_git_ref_and_subfolder_locks_commit(proj, git_repo):
    tagged = _git(git_repo, "rev-parse", "v1").strip()
    _bump(git_repo, "1.1.0")
    ops(proj).install([f"git+file://{git_repo}#v1:skills/review"])
    assert installed_version(proj, "review") == "1.0.0"
    lock = read_lock(proj / "skills.lock")["review"]
    assert (lock.commit, lock.source["ref"], lock.source["subdir"]) == (tagged, "v1", "skills/review")
    shutil.rmtree(proj / ".agents")
    ops(proj).sync(frozen=True)
    assert installed_version(proj, "review") == "1.0.0"


def test_git_branch_update_follows_new_commits(proj, git_repo):
    ops(proj).install([f"git+file://{git_repo}#main:skills/review"])
    _bump(git_repo, "1.2.0")
    [change] = ops(proj).update()
    assert (change.old, change.new) == ("1.0.0", "1.2.0")
    assert installed_version(proj, "review") == "1.2.0"


def test_git_missing_subfolder_is_explained(proj, git_repo):
    with pytest.raises(SkillctlError) as err:
        ops(proj).install([f"git+file://{git_repo}#v1:skills/nope"])
    assert err.value.code == "source.not_found" and err.value.hint


def test_same_name_from_two_sources_is_a_collision(proj, git_repo):
    ops(proj).install([f"git+file://{git_repo}#v1:skills/review"])
    other = F.make_skill(proj / "mine", "review", "5.0.0")
    with pytest.raises(SkillctlError) as err:
        ops(proj).install([str(other)])
    assert err.value.code == "install.collision" and "git" in err.value.message
    assert installed_version(proj, "review") == "1.0.0"
    ops(proj, force=True).install([str(other)])
    assert installed_version(proj, "review") == "5.0.0"


def test_invalid_skill_folder_installs_nothing(proj):
    bad = proj / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("no frontmatter here\n")
    with pytest.raises(SkillctlError) as err:
        ops(proj).install(["./bad"])
    assert err.value.exit_code == ExitCode.FAILURE
    assert read_lock(proj / "skills.lock") == {}


def test_installing_a_skill_that_cannot_work_here_warns_with_the_check_reasons(proj):
    from skillctl.reporting import Reporter

    folder = proj / "vendor" / "needs-tool"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: needs-tool\ndescription: Runs a tool nobody has, for the gate warning test.\n"
        "requires:\n  bins:\n    - no-such-binary-xyz\n  env:\n    - NO_SUCH_VAR_XYZ\ninstall:\n  - kind: apt\n"
        "    package: xyz-tools\n    bins:\n      - no-such-binary-xyz\n---\n# Needs a tool\n"
    )
    reporter = Reporter()
    operations = Operations.for_scope(Scope.project(proj), config=Config(), reporter=reporter)
    [change] = operations.install(["./vendor/needs-tool"])
    assert change.action == "installed"
    [warning] = reporter.warnings
    assert "needs-tool is installed but will not be offered here" in warning
    assert "no-such-binary-xyz" in warning and "NO_SUCH_VAR_XYZ" in warning and "xyz-tools" in warning

    quiet = Reporter()
    fine = F.make_skill(proj / "vendor", "fine", "1.0.0")
    Operations.for_scope(Scope.project(proj), config=Config(), reporter=quiet).install([str(fine)])
    assert quiet.warnings == []


def test_a_skill_whose_name_breaks_the_rule_installs_under_its_normalised_name(proj):
    from skillctl.reporting import Reporter

    folder = proj / "vendor" / "ahrefs"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Ahrefs Automation\ndescription: Automates Ahrefs reports.\n---\n# Ahrefs\n"
    )
    reporter = Reporter()
    [change] = Operations.for_scope(Scope.project(proj), config=Config(), reporter=reporter).install(
        ["./vendor/ahrefs"]
    )
    assert (change.action, change.name) == ("installed", "ahrefs-automation")
    assert (proj / ".agents/skills/ahrefs-automation/SKILL.md").is_file()
    assert reporter.warnings == [
        "'Ahrefs Automation' is not a valid skill name; installed as ahrefs-automation (skills.lock keeps the original)"
    ]
    assert read_lock(proj / "skills.lock")["ahrefs-automation"].declared_name == "Ahrefs Automation"
    assert ops(proj).verify() == [{"name": "ahrefs-automation", "version": "", "ok": True, "problems": []}]


def test_an_invalid_skill_folder_is_named_once_in_the_error(proj):
    folder = proj / "vendor" / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: broken\n---\n# no description\n")
    with pytest.raises(SkillctlError) as err:
        ops(proj).install(["./vendor/broken"])
    assert err.value.message.count("is not a valid skill") == 1 and "description.missing" in err.value.message


def test_real_corpus_skills_with_invalid_names_install(proj, corpus_dir):
    import shutil

    found = [
        p.parent for p in corpus_dir.rglob("SKILL.md") if "name: Ahrefs Automation" in p.read_text(errors="replace")
    ]
    if not found:
        pytest.skip("the corpus example is not there")
    shutil.copytree(found[0], proj / "vendor" / "ahrefs")
    [change] = ops(proj).install(["./vendor/ahrefs"])
    assert change.name == "ahrefs-automation" and change.action == "installed"


def _collection(root: Path) -> Path:
    F.make_skill(root, "alpha", "1.0.0").rename(root / "alpha")
    (root / "nested").mkdir()
    F.make_skill(root / "nested", "beta", "1.0.0").rename(root / "nested" / "beta")
    return root


def test_a_folder_of_several_skills_asks_which_then_installs_the_picked_or_all(proj):
    from skillctl.installer import collections
    from skillctl.installer.arguments import parse_source

    root = _collection(proj / "vendor")
    source = parse_source("./vendor")
    assert [(f.name, f.subdir) for f in collections.skills_in(source)] == [("alpha", "alpha"), ("beta", "nested/beta")]
    with pytest.raises(SkillctlError) as err:
        ops(proj).install(["./vendor"])
    assert err.value.code == "install.several_skills" and "alpha, beta" in err.value.message
    with pytest.raises(SkillctlError) as err:
        ops(proj).install(["./vendor"], pick=["gamma"])
    assert err.value.code == "install.skill_not_in_source"

    [beta] = ops(proj).install(["./vendor"], pick=["beta"])
    assert beta.name == "beta" and not (proj / ".agents/skills/alpha").exists()
    changes = ops(proj).install(["./vendor"], take_all=True)
    assert sorted(c.name for c in changes) == ["alpha", "beta"]
    assert read_manifest(proj / "skills.toml")["beta"].source == {"path": "vendor/nested/beta"}
    assert root.is_dir()


def test_a_repository_of_several_skills_installs_by_subfolder_and_reinstalls_from_the_lock(proj, git_repo):
    F.make_skill(git_repo / "skills", "lint", "1.0.0").rename(git_repo / "skills/lint")
    _git(git_repo, "add", ".")
    _git(git_repo, "commit", "-qm", "two skills")
    [change] = ops(proj).install([f"git+file://{git_repo}#main"], pick=["lint"])
    assert change.name == "lint"
    lock = read_lock(proj / "skills.lock")["lint"]
    assert (lock.source["ref"], lock.source["subdir"]) == ("main", "skills/lint")
    shutil.rmtree(proj / ".agents")
    [again] = ops(proj).sync(frozen=True)
    assert again.name == "lint" and (proj / ".agents/skills/lint/SKILL.md").is_file()


def test_install_list_shows_what_a_folder_holds(proj, capsys):
    import json

    from skillctl.cli.main import main

    _collection(proj / "vendor")
    assert main(["install", "./vendor", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sources"][0]["skills"]
    assert [(s["name"], s["path"]) for s in listed] == [("alpha", "alpha"), ("beta", "nested/beta")]
    assert not (proj / "skills.toml").exists()
    assert main(["install", "./vendor", "--skill", "alpha", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["changes"][0]["name"] == "alpha"
