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
