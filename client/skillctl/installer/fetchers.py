"""Every non-registry source turned into a checked archive in the cache, one fetcher per kind.

Folders and git checkouts are packed by the reproducible ``skillctl.format.pack_skill``, so
every install goes through the same archive checks and has a sha256. Registry sources are
resolved in :mod:`skillctl.installer.resolution`; :class:`~skillctl.installer.preparer.Preparer`
picks the fetcher by :class:`SourceKind`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skillctl.errors import IntegrityError, NetworkError, SkillctlError, UsageError
from skillctl.format.limits import DEFAULT_LIMITS
from skillctl.installer import cache
from skillctl.installer.arguments import Source, SourceKind, check_url
from skillctl.installer.project import Locked
from skillctl.reporting import Reporter
from skillctl.transport import check_request
from skillctl.trust import Notice


@dataclass
class Fetched:
    """An archive in the cache, ready to place, and what we know about where it came from."""

    archive: Path
    sha256: str
    source: Source
    version: str = ""  # registry sources: the resolved version
    registry_name: str = ""  # as recorded in skills.toml
    registry_url: str = ""
    commit: str = ""
    # The version's routing manifest, fetched on demand (None from the call: the registry has
    # none); the attribute is None when the registry says there is none to fetch.
    routing_manifest: Callable[[], dict | None] | None = None
    # What the registry says about the version (deprecated, failing tests, a forced scan warning).
    notices: list[Notice] = field(default_factory=list)


def fetch_url(url: str, *, expected_sha256: str = "", reporter: Reporter | None = None) -> tuple[Path, str]:
    """Download an archive URL into the cache; a cache hit on ``expected_sha256`` skips it."""
    check_url(url)
    if hit := cache.lookup(expected_sha256):
        return hit, expected_sha256
    from skillctl.transport import httpx

    tmp = cache.temp_path()
    try:
        with (
            httpx.Client(follow_redirects=True, timeout=30, event_hooks={"request": [check_request]}) as http,
            http.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise NetworkError(
                    f"GET {url} answered {response.status_code}",
                    hint="Check the URL; it must serve a .zip or .tar.gz archive.",
                    code="network.download_status",
                )
            _stream_to(response, tmp, label=url.rsplit("/", 1)[-1], reporter=reporter or Reporter())
    except httpx.HTTPError as err:
        tmp.unlink(missing_ok=True)
        raise NetworkError(
            f"could not download {url}: {err}",
            hint="Check the address and your connection.",
            code="network.download_failed",
        ) from err
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    sha = cache.sha256_file(tmp)
    if expected_sha256 and sha != expected_sha256:
        tmp.unlink(missing_ok=True)
        raise IntegrityError(
            f"{url} served bytes with sha256 {sha}, but the lock expects {expected_sha256}",
            hint="The file changed since it was locked. If you trust the new file, run "
            "`skillctl update NAME`; otherwise keep the lock and investigate.",
            code="integrity.url_sha256",
        )
    return cache.store(tmp, sha), sha


def _stream_to(response, dest: Path, *, label: str, reporter: Reporter) -> None:  # noqa: ANN001
    """Write the body to ``dest``, stopping at the archive limit (the caller deletes ``dest``)."""
    limit = DEFAULT_LIMITS.max_archive_bytes
    total = int(response.headers.get("content-length") or 0) or None
    if total and total > limit:
        raise _url_too_large(label, total, limit)
    written = 0
    with dest.open("wb") as fh, reporter.progress(label, total) as advance:
        for chunk in response.iter_bytes():
            written += len(chunk)
            if written > limit:
                raise _url_too_large(label, written, limit)
            fh.write(chunk)
            advance(len(chunk))


def _url_too_large(label: str, size: int, limit: int) -> SkillctlError:
    return SkillctlError(
        f"{label} is larger than the {limit // (1024 * 1024)} MiB archive limit ({size} bytes or more)",
        hint="A skill archive is at most that size; nothing was kept.",
        code="download.too_large",
    )


def fetch_archive_file(path: Path, *, expected_sha256: str = "") -> tuple[Path, str]:
    if not path.is_file():
        raise SkillctlError(
            f"archive not found: {path}", hint="Check the path in skills.toml.", code="source.not_found"
        )
    entry, sha = cache.add_copy(path)
    if expected_sha256 and sha != expected_sha256:
        raise IntegrityError(
            f"{path} has sha256 {sha}, but the lock expects {expected_sha256}",
            hint="The archive changed since it was locked; run `skillctl update NAME` to accept it.",
            code="integrity.archive_sha256",
        )
    return entry, sha


def pack_folder(folder: Path) -> tuple[Path, str]:
    """Pack a local skill folder reproducibly into the cache: (archive, sha256)."""
    from skillctl.format import InvalidSkillError, pack_skill
    from skillctl.format.names import NAME_FINDINGS

    if not (folder / "SKILL.md").is_file():
        raise SkillctlError(
            f"{folder} has no SKILL.md", hint="Point at the skill's own folder.", code="source.no_skill_md"
        )
    part = cache.temp_path()
    tmp = part.with_suffix(".zip")
    part.unlink()
    try:
        pack_skill(folder, tmp, allow=NAME_FINDINGS)  # the placer installs those under a normalised name
    except InvalidSkillError as err:
        tmp.unlink(missing_ok=True)
        codes = ", ".join(dict.fromkeys(f.code for f in err.report.errors)) or "no SKILL.md frontmatter"
        raise SkillctlError(
            f"{folder} is not a valid skill: {codes}",
            hint=f"Run `skillctl validate {folder}` for every finding.",
            code="install.invalid_skill",
        ) from err
    sha = cache.sha256_file(tmp)
    return cache.store(tmp, sha), sha


def fetch_git(url: str, ref: str, subdir: str, *, commit: str = "") -> tuple[Path, str, str]:
    """Clone, check out ``commit`` or ``ref``, pack the skill folder: (archive, sha256, commit)."""
    if not shutil.which("git"):
        raise SkillctlError("git is not installed", hint="Install git to use git sources.", code="source.git_missing")
    for value, what in ((url, "repository URL"), (ref, "ref"), (commit, "commit")):
        if value.startswith("-"):  # git would read it as an option (--upload-pack=... runs code)
            raise UsageError(
                f"the git {what} {value!r} starts with '-'",
                hint="Give a URL and a ref, not options.",
                code="source.invalid",
            )
    with tempfile.TemporaryDirectory(prefix="skillctl-git-") as tmp:
        checkout = Path(tmp) / "repo"
        target = commit or ref or "HEAD"
        clone(url, target, checkout)
        resolved = _git("-C", str(checkout), "rev-parse", "HEAD").strip()
        folder = (checkout / subdir).resolve() if subdir else checkout
        if checkout.resolve() not in (folder, *folder.parents) or not folder.is_dir():
            raise SkillctlError(
                f"{subdir!r} is not a folder in {url}#{target}",
                hint="Give the skill's folder after the ref: #REF:path/to/skill.",
                code="source.not_found",
            )
        if not subdir:
            shutil.rmtree(checkout / ".git", ignore_errors=True)
        archive, sha = pack_folder(folder)
    return archive, sha, resolved


def clone(url: str, target: str, checkout: Path) -> Path:
    """``url`` cloned into ``checkout`` at ``target`` (a branch, tag or commit; "" = HEAD)."""
    if not shutil.which("git"):
        raise SkillctlError("git is not installed", hint="Install git to use git sources.", code="source.git_missing")
    for value, what in ((url, "repository URL"), (target, "ref")):
        if value.startswith("-"):  # git would read it as an option (--upload-pack=... runs code)
            raise UsageError(
                f"the git {what} {value!r} starts with '-'",
                hint="Give a URL and a ref, not options.",
                code="source.invalid",
            )
    target = target or "HEAD"
    _git("clone", "--quiet", "--no-checkout", "--", url, str(checkout))
    # The ref resolved to a commit id first (rev-parse reads no option after --end-of-options),
    # so checkout only ever sees hex.
    resolved = _resolve_commit(checkout, target, what=f"{url}#{target}")
    _git("-C", str(checkout), "checkout", "--quiet", "--detach", resolved, what=f"{url}#{target}")
    return checkout


def _resolve_commit(checkout: Path, target: str, *, what: str) -> str:
    """The commit id of a ref, tag, commit or (not yet local) branch of the clone."""
    for candidate in (target, f"origin/{target}"):
        try:
            args = ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{candidate}^{{commit}}")
            return _git("-C", str(checkout), *args, what=what).strip()
        except NetworkError:
            continue
    raise NetworkError(
        f"{what}: no such branch, tag or commit", hint="Check the ref after '#'.", code="source.git_failed"
    )


def _git(*args: str, what: str = "") -> str:
    # ext:: transports run commands: never, whatever the user's git config says.
    proc = subprocess.run(
        ["git", "-c", "protocol.ext.allow=never", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    if proc.returncode != 0:
        raise NetworkError(
            f"git {args[0] if args[0] != '-C' else args[2]} failed{' for ' + what if what else ''}: "
            f"{proc.stderr.strip() or proc.stdout.strip()}",
            hint="Check the repository URL and that the ref exists.",
            code="source.git_failed",
        )
    return proc.stdout


# --- one fetcher per kind -------------------------------------------------------------------

Fetch = Callable[[Source, "Locked | None", Reporter], Fetched]


def _from_url(source: Source, locked: Locked | None, reporter: Reporter) -> Fetched:
    expected = locked.sha256 if locked else ""
    archive, sha = fetch_url(source.location, expected_sha256=expected, reporter=reporter)
    return Fetched(archive, sha, source)


def _from_archive(source: Source, locked: Locked | None, reporter: Reporter) -> Fetched:
    archive, sha = fetch_archive_file(Path(source.location), expected_sha256=locked.sha256 if locked else "")
    return Fetched(archive, sha, source)


def _from_folder(source: Source, locked: Locked | None, reporter: Reporter) -> Fetched:
    archive, sha = pack_folder(Path(source.location))
    return Fetched(archive, sha, source)


def _from_git(source: Source, locked: Locked | None, reporter: Reporter) -> Fetched:
    archive, sha, commit = fetch_git(source.location, source.ref, source.subdir, commit=locked.commit if locked else "")
    if locked and sha != locked.sha256:
        raise IntegrityError(
            f"{source.describe()} at commit {commit[:12]} packs to sha256 {sha}, but the lock expects {locked.sha256}",
            hint="The repository was rewritten since it was locked; investigate before "
            "running `skillctl update` to accept it.",
            code="integrity.git_sha256",
        )
    return Fetched(archive, sha, source, commit=commit)


FETCHERS: dict[SourceKind, Fetch] = {
    SourceKind.URL: _from_url,
    SourceKind.ARCHIVE: _from_archive,
    SourceKind.FOLDER: _from_folder,
    SourceKind.GIT: _from_git,
}
