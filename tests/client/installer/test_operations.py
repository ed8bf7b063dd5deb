"""install / update / uninstall / verify through the library, against a registry over HTTP."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

import tests.client.installer.fakes as F  # noqa: E402
from skillctl.config import Config, Registry
from skillctl.errors import ExitCode, SkillctlError
from skillctl.installer import Operations
from skillctl.installer.project import Scope, read_lock, read_manifest


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user" / ".agents" / "skills"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("SKILLYARD_REGISTRY", raising=False)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    return proj


@pytest.fixture
def registry(tmp_path):
    reg = F.FakeRegistry(tmp_path / "reg")
    yield reg
    reg.close()


def ops_for(proj: Path, *regs: tuple[str, str], default: str = "main", force: bool = False) -> Operations:
    config = Config(registries={n: Registry(n, url) for n, url in regs}, default_registry=default)
    return Operations.for_scope(Scope.project(proj), config=config, force=force)


@pytest.fixture
def ops(env, registry):
    for v in ("1.0.0", "1.1.0", "2.0.0"):
        registry.publish("hello", v)
    return ops_for(env, ("main", registry.url))


def test_install_range_places_highest_match_and_locks_sha(ops, registry, env):
    [change] = ops.install(["hello@^1.0"])
    assert (change.action, change.new) == ("installed", "1.1.0")
    assert "Version 1.1.0" in (env / ".agents/skills/hello/SKILL.md").read_text()
    lock = read_lock(env / "skills.lock")["hello"]
    assert lock.sha256 == registry.skills["hello"]["1.1.0"]["sha256"]
    assert lock.registry_url == registry.url and set(lock.files) == {"SKILL.md"}
    assert read_manifest(env / "skills.toml")["hello"].source == {"registry": "main", "version": "^1.0"}


def test_install_without_spec_records_caret_of_resolved_version(ops, env):
    ops.install(["hello"])
    assert read_manifest(env / "skills.toml")["hello"].source["version"] == "^2.0.0"


def test_the_installers_working_files_stay_out_of_git(ops, env):
    import subprocess

    subprocess.run(["git", "init", "-q", str(env)], check=True)
    ops.install(["hello@^1.0"])
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=env, capture_output=True, text=True, check=True
    ).stdout
    assert ".skillyard-tmp" not in status and ".agents/skills/hello/SKILL.md" in status and "skills.lock" in status


def test_installing_many_skills_writes_the_lock_once(env, registry, monkeypatch):
    """Rewriting skills.lock after every skill made installing N skills quadratic."""
    from skillctl.installer import project

    for i in range(6):
        registry.publish(f"s{i}", "1.0.0")
    writes = []
    real = project.write_lock
    monkeypatch.setattr(project, "write_lock", lambda path, locked: (writes.append(len(locked)), real(path, locked)))
    ops_for(env, ("main", registry.url)).install([f"s{i}" for i in range(6)])
    assert writes == [6] and set(read_lock(env / "skills.lock")) == {f"s{i}" for i in range(6)}


def test_render_lock_is_exactly_what_tomlkit_wrote(env):
    """The fast writer produces the bytes the tomlkit version did, odd file names included."""
    import tomllib

    from skillctl import fileio
    from skillctl.installer.project import LOCK_VERSION, Locked, render_lock

    locked = {
        "hello": Locked(
            "hello",
            "1.1.0",
            "ab" * 32,
            {"registry": "main"},
            "https://r.example",
            files={"SKILL.md": "cd" * 32, 'we"ird \\ \x01\x7f é.md': "ef" * 32},
        ),
        "local": Locked("local", "", "00" * 32, {"path": "../x"}),
    }
    body = {"lock-version": LOCK_VERSION, "skills": {n: locked[n].to_toml() for n in sorted(locked)}}
    text = render_lock(locked)
    assert text.endswith(fileio.dump_toml(body)) and tomllib.loads(text) == body


def test_lock_file_is_deterministic_toml(ops, env):
    ops.install(["hello@^1.0"])
    first = (env / "skills.lock").read_bytes()
    shutil.rmtree(env / ".agents")
    ops.sync()
    assert (env / "skills.lock").read_bytes() == first
    assert tomllib.loads(first.decode())["lock-version"] == 1


def test_verify_names_edited_missing_and_extra_files(ops, env):
    ops.install(["hello@^1.0"])
    assert ops.verify()[0]["ok"]
    skill = env / ".agents/skills/hello"
    (skill / "SKILL.md").write_text("edited")
    (skill / "notes.txt").write_text("mine")
    [result] = ops.verify()
    assert not result["ok"]
    assert {(p["code"], p["path"]) for p in result["problems"]} == {
        ("file_changed", "SKILL.md"),
        ("file_extra", "notes.txt"),
    }


def test_frozen_install_restores_deleted_folder_from_cache_without_network(ops, registry, env):
    ops.install(["hello@^1.0"])
    shutil.rmtree(env / ".agents")
    registry.requests.clear()
    [change] = ops.sync(frozen=True)
    assert (change.action, change.new) == ("restored", "1.1.0") and "Version 1.1.0" in (
        env / ".agents/skills/hello/SKILL.md"
    ).read_text()
    assert registry.requests == [] or all("download" not in r for r in registry.requests)


def test_frozen_fails_when_manifest_and_lock_disagree(ops, env):
    ops.install(["hello@^1.0"])
    (env / "skills.toml").write_text('[skills.hello]\nregistry = "main"\nversion = "^2.0"\n')
    with pytest.raises(SkillctlError) as err:
        ops.sync(frozen=True)
    assert err.value.code == "project.lock_mismatch"
    assert read_lock(env / "skills.lock")["hello"].version == "1.1.0"


def test_update_stays_within_range_and_prints_from_to(ops, registry, env):
    ops.install(["hello@^1.0"])
    registry.publish("hello", "1.2.0")
    registry.publish("hello", "2.1.0")
    [dry] = ops.update(["hello"], dry_run=True)
    assert (dry.action, dry.old, dry.new) == ("would-update", "1.1.0", "1.2.0")
    assert read_lock(env / "skills.lock")["hello"].version == "1.1.0"
    [change] = ops.update(["hello"])
    assert (change.action, change.old, change.new) == ("updated", "1.1.0", "1.2.0")
    assert ops.update()[0].action == "unchanged"


def test_update_of_untouched_install_never_claims_local_changes(ops, registry, env):
    ops.install(["hello@^1.0"])
    (env / ".agents/skills/hello/__pycache__").mkdir()  # running a script leaves this: not an edit
    (env / ".agents/skills/hello/__pycache__/x.pyc").write_bytes(b"\0")
    registry.publish("hello", "1.2.0")
    assert ops.update(["hello"])[0].new == "1.2.0"


def test_update_with_local_edits_refuses_naming_files_unless_forced(ops, registry, env):
    ops.install(["hello@^1.0"])
    (env / ".agents/skills/hello/SKILL.md").write_text("mine")
    registry.publish("hello", "1.2.0")
    with pytest.raises(SkillctlError) as err:
        ops.update(["hello"])
    assert err.value.code == "install.local_changes" and "SKILL.md" in err.value.message
    assert (env / ".agents/skills/hello/SKILL.md").read_text() == "mine"
    ops.force = True
    assert ops.update(["hello"])[0].new == "1.2.0"


def test_tampered_download_is_refused_with_exit_4_and_nothing_installed(ops, registry, env):
    registry.served[("hello", "1.1.0")] = registry.skills["hello"]["1.0.0"]["data"]
    with pytest.raises(SkillctlError) as err:
        ops.install(["hello@^1.0"])
    assert err.value.exit_code == ExitCode.INTEGRITY
    assert not (env / ".agents/skills/hello").exists()
    assert read_lock(env / "skills.lock") == {}


@pytest.mark.parametrize("bad", ["missing-skill", "hello@^9", "tampered"])
def test_a_failing_skill_in_a_list_installs_none_of_them(ops, registry, env, bad):
    registry.publish("other", "1.0.0")
    registry.publish("tampered", "1.0.0")
    registry.served[("tampered", "1.0.0")] = registry.skills["other"]["1.0.0"]["data"]
    with pytest.raises(SkillctlError):
        ops.install(["other", bad])
    assert not (env / ".agents/skills/other").exists()
    assert not (env / "skills.toml").exists() and not (env / "skills.lock").exists()


def test_registry_sha_differing_from_lock_is_refused_with_exit_4(ops, registry, env):
    ops.install(["hello@^1.0"])
    shutil.rmtree(env / ".agents")
    shutil.rmtree(Path.cwd().parent / "home" / "cache")
    registry.set_version("hello", "1.1.0", sha256="0" * 64)
    with pytest.raises(SkillctlError) as err:
        ops.sync()
    assert err.value.exit_code == ExitCode.INTEGRITY
    assert not (env / ".agents/skills/hello").exists()


def test_verify_reports_yanked_and_quarantined_versions(ops, registry, env):
    ops.install(["hello@^1.0"])
    registry.set_version("hello", "1.1.0", yanked=True, yanked_reason="leaks tokens")
    codes = [p["code"] for p in ops.verify()[0]["problems"]]
    assert codes == ["yanked"]
    registry.set_version("hello", "1.1.0", yanked=False, status="quarantined")
    assert [p["code"] for p in ops.verify()[0]["problems"]] == ["status_quarantined"]
    assert ops.verify(registry_status=False)[0]["ok"]


def test_same_name_on_two_registries_never_switches_silently(env, tmp_path):
    corp, public = F.FakeRegistry(tmp_path / "corp"), F.FakeRegistry(tmp_path / "public")
    try:
        corp.publish("hello", "1.0.0", files={"corp.txt": "private"})
        public.publish("hello", "1.5.0", files={"evil.txt": "public"})
        ops = ops_for(env, ("corp", corp.url), ("public", public.url), default="corp")
        ops.install(["hello"])
        assert read_lock(env / "skills.lock")["hello"].registry_url == corp.url
        # The default registry changes to the public one: installs and updates stay on corp.
        ops = ops_for(env, ("corp", corp.url), ("public", public.url), default="public")
        assert ops.install(["hello"])[0].action == "unchanged"
        assert ops.update()[0].action == "unchanged"
        shutil.rmtree(env / ".agents")
        ops.sync()
        assert (env / ".agents/skills/hello/corp.txt").exists()
        with pytest.raises(SkillctlError) as err:
            ops.install(["public:hello"])
        assert err.value.code == "install.collision"
        # The registry's name now points elsewhere: refused, the lock names the old URL.
        ops = ops_for(env, ("corp", public.url), default="corp")
        shutil.rmtree(env / ".agents")
        with pytest.raises(SkillctlError) as err:
            ops.sync()
        assert err.value.code == "install.registry_changed"
    finally:
        corp.close()
        public.close()


def test_same_name_from_folder_collides_with_registry_install(ops, env, tmp_path):
    ops.install(["hello@^1.0"])
    folder = F.make_skill(tmp_path / "local", "hello", "9.0.0")
    with pytest.raises(SkillctlError) as err:
        ops.install([str(folder)])
    assert err.value.code == "install.collision"
    assert read_lock(env / "skills.lock")["hello"].version == "1.1.0"
    ops.force = True
    assert ops.install([str(folder)])[0].new == "9.0.0"
    assert "path" in read_manifest(env / "skills.toml")["hello"].source


def test_unmanaged_folder_is_a_collision(ops, env):
    F.make_skill(env / ".agents/skills", "hello", "0.1.0").rename(env / ".agents/skills/hello")
    with pytest.raises(SkillctlError) as err:
        ops.install(["hello"])
    assert err.value.code == "install.collision"


def test_uninstall_removes_folder_lock_entry_and_agent_links(ops, env):
    ops.install(["hello@^1.0"], agents=["claude", "codex"])
    link = env / ".claude/skills/hello"
    assert link.is_symlink() and (link / "SKILL.md").exists()
    [change] = ops.uninstall(["hello"])
    assert change.action == "removed"
    assert not (env / ".agents/skills/hello").exists() and not link.is_symlink()
    assert read_lock(env / "skills.lock") == {} and read_manifest(env / "skills.toml") == {}
    with pytest.raises(SkillctlError) as err:
        ops.uninstall(["hello"])
    assert err.value.code == "install.not_installed"


def _saving(monkeypatch) -> list:
    import skillctl.routing.manifests as manifests

    saved: list = []
    monkeypatch.setattr(manifests, "save_registry_manifest", lambda *a: saved.append(a))
    return saved


def test_registry_routing_manifest_is_saved(ops, registry, env, monkeypatch):
    saved = _saving(monkeypatch)
    registry.publish("hello", "1.3.0", routing_manifest={"keywords": ["greet"]})
    ops.install(["hello@^1.0"])
    assert saved == [("hello", registry.skills["hello"]["1.3.0"]["sha256"], {"keywords": ["greet"]})]


def _version_detail_requests(registry) -> list[str]:
    return [p for p in registry.requests if "/versions/" in p and not p.endswith("/download")]


def test_registry_without_has_routing_manifest_still_gets_version_detail(ops, registry):
    ops.install(["hello@^1.0"])
    assert _version_detail_requests(registry) == ["/api/v1/skills/hello/versions/1.1.0"]


def test_install_skips_version_detail_when_registry_lists_no_routing_manifest(ops, registry):
    registry.lists_routing_manifests = True
    registry.publish("world", "1.0.0")
    ops.install(["hello@^1.0", "world"])  # two skills: the concurrent warm-up runs too
    assert _version_detail_requests(registry) == []
    # Per skill: the download by spec an older registry refuses, the skill detail, the download.
    assert len(registry.requests) == 6


def test_a_current_registry_sends_each_new_skill_in_one_request(ops, registry, env):
    registry.resolves_downloads = True
    registry.publish("world", "1.0.0")
    ops.install(["hello@^1.0", "world"])
    assert sorted(registry.requests) == ["/api/v1/skills/hello/download", "/api/v1/skills/world/download"]
    lock = read_lock(env / "skills.lock")
    assert (lock["hello"].version, lock["hello"].sha256) == ("1.1.0", registry.skills["hello"]["1.1.0"]["sha256"])
    assert (lock["world"].version, lock["world"].sha256) == ("1.0.0", registry.skills["world"]["1.0.0"]["sha256"])


def test_a_resolved_download_with_a_routing_manifest_fetches_it_once(ops, registry, monkeypatch):
    saved = _saving(monkeypatch)
    registry.resolves_downloads = True
    registry.publish("hello", "1.3.0", routing_manifest={"keywords": ["greet"]})
    ops.install(["hello@^1.0"])
    assert saved == [("hello", registry.skills["hello"]["1.3.0"]["sha256"], {"keywords": ["greet"]})]
    assert registry.requests == ["/api/v1/skills/hello/download", "/api/v1/skills/hello/versions/1.3.0"]


def test_a_skill_another_project_installed_comes_from_the_cache_not_the_network(ops, registry, env, tmp_path):
    registry.resolves_downloads = True
    ops.install(["hello@^1.0"])
    other = tmp_path / "other"
    other.mkdir()
    [change] = ops_for(other, ("main", registry.url)).install(["hello@^1.0"])
    assert (change.action, change.new) == ("installed", "1.1.0")
    assert registry.not_modified == ["hello"]  # offered the cached digest: 304, no bytes sent
    assert read_lock(other / "skills.lock")["hello"].sha256 == read_lock(env / "skills.lock")["hello"].sha256
    assert (other / ".agents/skills/hello/SKILL.md").read_text() == (env / ".agents/skills/hello/SKILL.md").read_text()


def test_a_cached_archive_found_corrupt_after_the_304_is_downloaded_again(ops, registry, env, tmp_path):
    from skillctl.installer import cache

    registry.resolves_downloads = True
    ops.install(["hello@^1.0"])
    sha = read_lock(env / "skills.lock")["hello"].sha256
    [entry] = [p for p in cache.archives_dir().rglob(f"{sha}*") if p.is_file()]
    entry.write_bytes(b"not the archive")
    other = tmp_path / "other"
    other.mkdir()
    ops_for(other, ("main", registry.url)).install(["hello@^1.0"])
    assert registry.not_modified == ["hello"]
    assert read_lock(other / "skills.lock")["hello"].sha256 == sha  # downloaded again, verified
    assert cache.lookup(sha) is not None


def test_the_cached_digests_offered_are_per_registry(env, tmp_path):
    from skillctl.installer import cache

    tmp = cache.temp_path()
    tmp.write_bytes(b"PK\x03\x04 an archive")
    sha = cache.sha256_file(tmp)
    cache.store(tmp, sha)
    cache.remember("https://a.example", "hello", sha)
    assert cache.known("https://a.example/", "hello") == [sha]
    assert cache.known("https://b.example", "hello") == []  # one registry never learns another's
    names = next(cache.archives_dir().glob("names/*/hello"))
    names.write_text(names.read_text() + "../../../etc/passwd" + "0" * 45 + "\nnot-a-digest\n")
    assert cache.known("https://a.example", "hello") == [sha]  # damaged lines are skipped


def test_the_routing_manifests_of_many_new_skills_come_in_one_request(ops, registry, monkeypatch):
    saved = _saving(monkeypatch)
    registry.resolves_downloads = registry.batches_manifests = True
    names = ["alpha", "beta", "gamma"]
    for name in names:
        registry.publish(name, "1.0.0", routing_manifest={"keywords": [f"{name}-word"]})
    ops.install(names)
    assert sorted(saved) == [(n, registry.skills[n]["1.0.0"]["sha256"], {"keywords": [f"{n}-word"]}) for n in names]
    assert sorted(registry.requests) == ["/api/v1/routing-manifests"] + [f"/api/v1/skills/{n}/download" for n in names]


def test_a_registry_without_the_manifests_batch_is_asked_per_version(ops, registry, monkeypatch):
    saved = _saving(monkeypatch)
    registry.resolves_downloads = True  # but answers 404 for the batch, as an older registry
    for name in ("alpha", "beta"):
        registry.publish(name, "1.0.0", routing_manifest={"keywords": [f"{name}-word"]})
    ops.install(["alpha", "beta"])
    assert sorted(n for n, _, _ in saved) == ["alpha", "beta"]
    assert sorted(_version_detail_requests(registry)) == [
        "/api/v1/skills/alpha/versions/1.0.0",
        "/api/v1/skills/beta/versions/1.0.0",
    ]


def test_a_warn_verdict_in_the_download_headers_still_shows_the_findings_and_asks(ops, registry):
    registry.resolves_downloads = True
    registry.set_version("hello", "1.1.0", scan_verdict="warn")
    with pytest.raises(SkillctlError) as err:
        ops.install(["hello@^1.0"])  # no terminal to ask on, no --force
    assert err.value.code == "install.scan_warn"
    # The findings come from the version detail; the archive is not downloaded twice.
    assert registry.requests == [
        "/api/v1/skills/hello/download",
        "/api/v1/skills/hello",
        "/api/v1/skills/hello/versions/1.1.0",
    ]


def test_a_blocked_resolved_download_says_malicious_with_the_findings(ops, registry):
    registry.resolves_downloads = True
    registry.set_version("hello", "1.1.0", scan_verdict="malicious")
    with pytest.raises(SkillctlError) as err:
        ops.install(["hello@^1.0"])
    assert err.value.code == "install.malicious"


def test_listed_routing_manifest_is_fetched_and_saved(ops, registry, monkeypatch):
    saved = _saving(monkeypatch)
    registry.lists_routing_manifests = True
    registry.publish("hello", "1.3.0", routing_manifest={"keywords": ["greet"]})
    ops.install(["hello@^1.0"])
    assert saved == [("hello", registry.skills["hello"]["1.3.0"]["sha256"], {"keywords": ["greet"]})]
    assert _version_detail_requests(registry) == ["/api/v1/skills/hello/versions/1.3.0"]


def test_global_scope_has_its_own_lock(env, registry, tmp_path):
    registry.publish("hello", "1.0.0")
    config = Config(registries={"main": Registry("main", registry.url)}, default_registry="main")
    ops = Operations.for_scope(Scope.user(), config=config)
    ops.install(["hello"])
    user = tmp_path / "user/.agents"
    assert (user / "skills/hello/SKILL.md").exists() and (user / "skills.lock").exists()
    assert not (env / "skills.lock").exists()


def test_symlink_in_place_of_a_skill_is_replaced_only_with_force(ops, env, tmp_path):
    dev = F.make_skill(tmp_path / "dev", "hello", "0.0.1")
    (env / ".agents/skills").mkdir(parents=True)
    (env / ".agents/skills/hello").symlink_to(dev)
    with pytest.raises(SkillctlError) as err:
        ops.install(["hello@^1.0"])
    assert err.value.code == "install.collision"
    ops.force = True
    ops.install(["hello@^1.0"])
    assert not (env / ".agents/skills/hello").is_symlink() and (dev / "SKILL.md").exists()


def test_one_registry_client_serves_a_whole_install(env, registry):
    from skillctl.registry_client import RegistryClient

    made = []

    def factory(reg):
        made.append(reg.url)
        return RegistryClient(reg)

    for name in ("hello", "world", "again"):
        registry.publish(name, "1.0.0")
    config = Config(registries={"main": Registry("main", registry.url)}, default_registry="main")
    ops = Operations.for_scope(Scope.project(env), config=config, client_factory=factory)
    ops.install(["hello", "world", "again"])  # warm-up threads and the serial pass alike
    assert made == [registry.url]


def test_a_yanked_locked_version_moves_to_the_newest_non_yanked_one_labelled_as_such(ops, registry, env):
    ops.install(["hello@^1.0"])  # 1.1.0
    registry.set_version("hello", "1.1.0", yanked=True, yanked_reason="leaks tokens")
    [dry] = ops.update(["hello"], dry_run=True)
    assert (dry.action, dry.old, dry.new) == ("would-replace-yanked", "1.1.0", "1.0.0")
    [change] = ops.update(["hello"])
    assert (change.action, change.old, change.new) == ("replaced-yanked", "1.1.0", "1.0.0")
    assert read_lock(env / "skills.lock")["hello"].version == "1.0.0"


def test_update_never_downgrades_a_version_that_is_not_yanked(ops, registry, env):
    ops.install(["hello@^1.0"])  # 1.1.0
    registry.set_version("hello", "1.1.0", status="deleted")
    del registry.skills["hello"]["1.1.0"]  # gone from the listing, not yanked
    assert ops.update(["hello"])[0].action == "unchanged"


def test_outdated_shows_current_wanted_and_latest(ops, registry, env):
    ops.install(["hello@^1.0"])  # 1.1.0; 2.0.0 exists
    registry.publish("hello", "1.2.0")
    registry.set_version("hello", "1.1.0", deprecated="use 1.2", test_result="failed")
    [row] = ops.outdated()
    assert row == {
        "name": "hello",
        "current": "1.1.0",
        "wanted": "1.2.0",
        "latest": "2.0.0",
        "range": "^1.0",
        "outdated": True,
        "deprecated": "use 1.2",  # what the registry says about `current`
        "test_result": "failed",
    }


@pytest.mark.parametrize("resolves_downloads", [False, True])
def test_an_invalid_archive_among_many_places_none_and_leaves_no_staging(ops, registry, env, resolves_downloads):
    import hashlib
    import io
    import zipfile

    registry.resolves_downloads = resolves_downloads
    for name in ("alpha", "beta", "gamma"):
        registry.publish(name, "1.0.0")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("broken/SKILL.md", "---\nname: broken\n---\nNo description.\n")
    data = buffer.getvalue()
    registry.publish("broken", "1.0.0")
    registry.set_version("broken", "1.0.0", data=data, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    with pytest.raises(SkillctlError) as err:
        ops.install(["alpha", "hello", "broken", "beta", "gamma"])  # fetched and staged concurrently
    assert err.value.code == "install.invalid_skill"
    assert not (env / ".agents" / "skills").exists() or not any((env / ".agents" / "skills").iterdir())
    assert not list((env / ".agents" / ".skillyard-tmp").glob("new-*"))
    assert not (env / "skills.lock").exists()


def test_a_new_skills_toml_is_exactly_what_tomlkit_writes():
    """skills.toml of a new project is written directly, in the bytes tomlkit wrote; a value
    the direct writer does not know (an extra key's number) still goes through tomlkit."""
    from skillctl import fileio
    from skillctl.installer.project import Wanted, render_manifest

    wanted = {
        "hello": Wanted("hello", {"registry": "main", "version": "^1.0.0"}, ["codex", "claude"]),
        "local": Wanted("local", {"path": '../we"ird \\ \x01\x7f é'}, []),
        "odd.name é": Wanted("odd.name é", {"git": "https://g.example/x.git", "ref": "v1"}),
        "none": Wanted("none", {"url": "https://u.example/a.zip"}, [], {"note": "kept"}),
    }
    tables = {n: wanted[n].to_toml() for n in sorted(wanted)}
    assert render_manifest(wanted) == fileio.dump_toml({"skills": tables})
    extra = {"x": Wanted("x", {"path": "x"}, [], {"retries": 3, "tags": ["a"]})}
    assert render_manifest(extra) == fileio.dump_toml({"skills": {"x": extra["x"].to_toml()}})
    assert render_manifest({}) == fileio.dump_toml({"skills": {}})
