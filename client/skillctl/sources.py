"""What ``skillctl install ARG`` means, and fetching it into the cache.

Accepted forms, tried in this order:

- ``git+<url>[#<ref>][:<subdir>]`` or ``<https-url>.git[#...]`` — a git repository, e.g.
  ``git+https://example.org/team/skills.git#v1:skills/review`` or
  ``git+file:///srv/repo#main:skills/foo``; ``#:skills/foo`` takes the default branch.
- ``https://...`` — an archive (.zip or .tar.gz) on a web server. Plain ``http://`` only for
  loopback addresses (tests, local mirrors).
- a path: anything starting with ``/``, ``./``, ``../`` or ``~``, containing a path separator,
  or ending in ``.zip``/``.tar.gz``/``.tgz`` — a skill folder or an archive file.
- ``[registry:]name[@spec]`` — a skill from a registry, e.g. ``hello``, ``hello@1.2.3``,
  ``hello@^1.2``, ``corp:hello@~1.4``. A bare word is always a registry name: write ``./hello``
  for a folder of that name.

Every non-registry source is turned into an archive before anything is placed (folders and
git checkouts through the reproducible ``skillctl.format.pack_skill``), so every install goes
through the same archive checks and has a sha256.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from skillctl import cache, console
from skillctl.errors import IntegrityError, NetworkError, SkillctlError, UsageError
from skillctl.format.limits import DEFAULT_LIMITS
from skillctl.project import Locked
from skillctl.transport import check_request, require_safe_url

NAME_RE = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_REGISTRY_ARG = re.compile(rf"^(?:(?P<registry>[a-z0-9][a-z0-9_.-]*):)?(?P<name>{NAME_RE})(?:@(?P<spec>.+))?$")
_ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
WARM_WORKERS = 8  # concurrent registry downloads: enough to hide latency, polite to a registry
FORMS_HINT = (
    "Use NAME, NAME@1.2.3, NAME@^1.2, REGISTRY:NAME@SPEC, ./folder, file.zip, file.tar.gz, "
    "https://host/skill.zip or git+https://host/repo.git#REF:SUBDIR."
)


@dataclass(frozen=True)
class Source:
    kind: str  # registry | folder | archive | url | git
    name: str = ""  # registry sources: the skill's name
    spec: str = ""  # registry sources: the version spec as given ("" = latest)
    registry: str = ""  # registry sources: the registry's name ("" = recorded or default)
    location: str = ""  # folder/archive: a path; url/git: a URL
    ref: str = ""  # git: branch, tag or commit
    subdir: str = ""  # git: the skill's folder inside the repository

    def describe(self) -> str:
        if self.kind == "registry":
            prefix = f"{self.registry}:" if self.registry else ""
            return f"{prefix}{self.name}" + (f"@{self.spec}" if self.spec else "")
        if self.kind == "git":
            frag = self.ref + (f":{self.subdir}" if self.subdir else "")
            return f"git+{self.location}" + (f"#{frag}" if frag else "")
        return self.location

    def record(self, base: Path) -> dict[str, str]:
        """The skills.toml source keys (paths inside ``base`` are stored relative to it)."""
        if self.kind == "registry":
            return {"registry": self.registry, "version": self.spec}
        if self.kind in ("folder", "archive"):
            key = "path" if self.kind == "folder" else "archive"
            return {key: _relative(Path(self.location), base)}
        if self.kind == "url":
            return {"url": self.location}
        return {"git": self.location, "ref": self.ref, "subdir": self.subdir}

    @classmethod
    def from_record(cls, name: str, record: dict[str, str], base: Path) -> Source:
        if record.get("git"):
            return cls("git", location=record["git"], ref=record.get("ref", ""),
                       subdir=record.get("subdir", ""))
        if record.get("url"):
            return cls("url", location=record["url"])
        for key, kind in (("archive", "archive"), ("path", "folder")):
            if record.get(key):
                return cls(kind, location=str((base / Path(record[key]).expanduser()).resolve()))
        return cls("registry", name=name, spec=record.get("version", ""),
                   registry=record.get("registry", ""))


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _looks_like_path(arg: str) -> bool:
    return (
        arg.startswith(("/", "./", "../", "~", ".\\"))
        or "/" in arg
        or "\\" in arg
        or arg in (".", "..")
        or arg.lower().endswith(_ARCHIVE_SUFFIXES)
    )


def _split_git(rest: str) -> tuple[str, str, str]:
    url, _, fragment = rest.partition("#")
    ref, _, subdir = fragment.partition(":")
    return url, ref, subdir.strip("/")


def parse_source(arg: str, *, cwd: Path | None = None) -> Source:
    """Turn one install argument into a :class:`Source`; UsageError (exit 2) when it is none."""
    arg = arg.strip()
    cwd = cwd or Path.cwd()
    if arg.startswith("git+"):
        url, ref, subdir = _split_git(arg[4:])
        return Source("git", location=url, ref=ref, subdir=subdir)
    if re.match(r"^https?://", arg):
        if urlparse(arg.partition("#")[0]).path.endswith(".git"):
            url, ref, subdir = _split_git(arg)
            return Source("git", location=url, ref=ref, subdir=subdir)
        check_url(arg)
        return Source("url", location=arg)
    if _looks_like_path(arg):
        path = (cwd / Path(arg).expanduser()).resolve()
        if path.is_dir():
            return Source("folder", location=str(path))
        if path.is_file():
            return Source("archive", location=str(path))
        raise UsageError(f"no such file or folder: {arg}", hint=FORMS_HINT, code="source_not_found")
    if match := _REGISTRY_ARG.match(arg):
        return Source("registry", name=match["name"], spec=(match["spec"] or "").strip(),
                      registry=match["registry"] or "")
    raise UsageError(f"cannot tell what to install from {arg!r}", hint=FORMS_HINT,
                     code="source_invalid")


def check_url(url: str) -> None:
    require_safe_url(url, what="the archive URL")


# --- fetching: every source ends as an archive in the cache --------------------------------


def fetch_url(url: str, *, expected_sha256: str = "", progress: bool = True) -> tuple[Path, str]:
    """Download an archive URL into the cache; a cache hit on ``expected_sha256`` skips it."""
    check_url(url)
    if hit := cache.lookup(expected_sha256):
        return hit, expected_sha256
    import httpx

    tmp = cache.temp_path()
    try:
        with httpx.Client(follow_redirects=True, timeout=30, event_hooks={"request": [check_request]}) as http, \
                http.stream("GET", url) as response:
            if response.status_code != 200:
                raise NetworkError(
                    f"GET {url} answered {response.status_code}",
                    hint="Check the URL; it must serve a .zip or .tar.gz archive.",
                )
            _stream_to(response, tmp, label=url.rsplit("/", 1)[-1], progress=progress)
    except httpx.HTTPError as err:
        tmp.unlink(missing_ok=True)
        raise NetworkError(f"could not download {url}: {err}",
                           hint="Check the address and your connection.") from err
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
        )
    return cache.store(tmp, sha), sha


def _stream_to(response, dest: Path, *, label: str, progress: bool) -> None:
    """Write the body to ``dest``, stopping at the archive limit (the caller deletes ``dest``)."""
    limit = DEFAULT_LIMITS.max_archive_bytes
    total = int(response.headers.get("content-length") or 0) or None
    if total and total > limit:
        raise _url_too_large(label, total, limit)
    written = 0
    with dest.open("wb") as fh:
        advance = lambda n: None  # noqa: E731
        bar = None
        if progress:
            from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

            bar = Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn(),
                           console=console.rich_console(stderr=True), transient=True)
            task = bar.add_task(label, total=total)
            bar.start()
            advance = lambda n: bar.advance(task, n)  # noqa: E731
        try:
            for chunk in response.iter_bytes():
                written += len(chunk)
                if written > limit:
                    raise _url_too_large(label, written, limit)
                fh.write(chunk)
                advance(len(chunk))
        finally:
            if bar is not None:
                bar.stop()


def _url_too_large(label: str, size: int, limit: int) -> SkillctlError:
    return SkillctlError(
        f"{label} is larger than the {limit // (1024 * 1024)} MiB archive limit ({size} bytes or more)",
        hint="A skill archive is at most that size; nothing was kept.",
        code="download.too_large",
    )


def fetch_archive_file(path: Path, *, expected_sha256: str = "") -> tuple[Path, str]:
    if not path.is_file():
        raise SkillctlError(f"archive not found: {path}", hint="Check the path in skills.toml.",
                            code="source_not_found")
    entry, sha = cache.add_copy(path)
    if expected_sha256 and sha != expected_sha256:
        raise IntegrityError(
            f"{path} has sha256 {sha}, but the lock expects {expected_sha256}",
            hint="The archive changed since it was locked; run `skillctl update NAME` to accept it.",
        )
    return entry, sha


def pack_folder(folder: Path) -> tuple[Path, str]:
    """Pack a local skill folder reproducibly into the cache: (archive, sha256)."""
    from skillctl.format import InvalidSkillError, pack_skill

    if not (folder / "SKILL.md").is_file():
        raise SkillctlError(f"{folder} has no SKILL.md", hint="Point at the skill's own folder.",
                            code="skill_missing")
    part = cache.temp_path()
    tmp = part.with_suffix(".zip")
    part.unlink()
    try:
        pack_skill(folder, tmp)
    except InvalidSkillError as err:
        tmp.unlink(missing_ok=True)
        raise SkillctlError(f"{folder} is not a valid skill: {err}",
                            hint=f"Run `skillctl validate {folder}` for every finding.",
                            code="invalid_skill") from err
    sha = cache.sha256_file(tmp)
    return cache.store(tmp, sha), sha


def fetch_git(url: str, ref: str, subdir: str, *, commit: str = "") -> tuple[Path, str, str]:
    """Clone (shallow when possible), check out ``commit`` or ``ref``, pack the skill folder.

    Returns (archive, sha256, commit).
    """
    if not shutil.which("git"):
        raise SkillctlError("git is not installed", hint="Install git to use git sources.",
                            code="git_missing")
    for value, what in ((url, "repository URL"), (ref, "ref"), (commit, "commit")):
        if value.startswith("-"):  # git would read it as an option (--upload-pack=... runs code)
            raise UsageError(f"the git {what} {value!r} starts with '-'", hint="Give a URL and a ref, not options.",
                             code="source_invalid")
    with tempfile.TemporaryDirectory(prefix="skillctl-git-") as tmp:
        checkout = Path(tmp) / "repo"
        _git("clone", "--quiet", "--no-checkout", "--", url, str(checkout))
        target = commit or ref or "HEAD"
        # The ref resolved to a commit id first (rev-parse reads no option after --end-of-options),
        # so checkout only ever sees hex.
        resolved = _resolve_commit(checkout, target, what=f"{url}#{target}")
        _git("-C", str(checkout), "checkout", "--quiet", "--detach", resolved, what=f"{url}#{target}")
        folder = (checkout / subdir).resolve() if subdir else checkout
        if checkout.resolve() not in (folder, *folder.parents) or not folder.is_dir():
            raise SkillctlError(f"{subdir!r} is not a folder in {url}#{target}",
                                hint="Give the skill's folder after the ref: #REF:path/to/skill.",
                                code="source_not_found")
        if not subdir:
            shutil.rmtree(checkout / ".git", ignore_errors=True)
        archive, sha = pack_folder(folder)
    return archive, sha, resolved


def _resolve_commit(checkout: Path, target: str, *, what: str) -> str:
    """The commit id of a ref, tag, commit or (not yet local) branch of the clone."""
    for candidate in (target, f"origin/{target}"):
        try:
            return _git("-C", str(checkout), "rev-parse", "--verify", "--quiet", "--end-of-options",
                        f"{candidate}^{{commit}}", what=what).strip()
        except NetworkError:
            continue
    raise NetworkError(f"{what}: no such branch, tag or commit", hint="Check the ref after '#'.", code="git_failed")


def _git(*args: str, what: str = "") -> str:
    # ext:: transports run commands: never, whatever the user's git config says.
    proc = subprocess.run(["git", "-c", "protocol.ext.allow=never", *args], capture_output=True, text=True,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    if proc.returncode != 0:
        raise NetworkError(
            f"git {args[0] if args[0] != '-C' else args[2]} failed{' for ' + what if what else ''}: "
            f"{proc.stderr.strip() or proc.stdout.strip()}",
            hint="Check the repository URL and that the ref exists.",
            code="git_failed",
        )
    return proc.stdout


# --- registry skills and the whole fetch step -------------------------------------------


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
    # The version's detail JSON, fetched on demand; None when the registry lists no routing manifest.
    detail: Callable[[], dict] | None = None


class Fetcher:
    """Gets any source into the cache as a checked archive (registry answers kept per run)."""

    def __init__(self, *, config: Any = None, client_factory: Callable | None = None,
                 progress: bool = True, force: bool = False) -> None:
        self._config = config
        self._client_factory = client_factory
        self.progress = progress
        self.force = force  # re-resolve a skill whose registry URL changed since it was locked
        self._answers: dict[tuple, Any] = {}
        self._clients: dict[tuple, Any] = {}
        self._clients_lock = threading.Lock()

    # --- collaborators ------------------------------------------------------------------

    @property
    def config(self):
        if self._config is None:
            from skillctl.config import load_config

            self._config = load_config()
        return self._config

    def registry(self, recorded: str = ""):
        """The registry a skill uses: the recorded name (or URL), else the default."""
        if "://" in recorded:
            return self.config.registry_for_url(recorded)
        return self.config.registry(recorded or None)

    def client(self, registry):
        """One client per registry for the run: a new one costs ~20 ms (TLS trust store) and
        loses the kept-alive connections. The warm-up threads share it (httpx is thread-safe)."""
        key = (registry.url, registry.token)
        with self._clients_lock:
            if key not in self._clients:
                if self._client_factory is None:
                    from skillctl.registry_client import RegistryClient

                    self._client_factory = RegistryClient
                self._clients[key] = self._client_factory(registry)
            return self._clients[key]


    # --- fetching -----------------------------------------------------------------------

    def fetch(self, source: Source, *, locked: Locked | None = None) -> Fetched:
        """Get ``source`` into the cache; with ``locked``, exactly what the lock says."""
        expected = locked.sha256 if locked else ""
        if source.kind == "registry":
            return self._fetch_registry(source, locked)
        if source.kind == "url":
            archive, sha = fetch_url(source.location, expected_sha256=expected,
                                             progress=self.progress)
            return Fetched(archive, sha, source)
        if source.kind == "archive":
            archive, sha = fetch_archive_file(Path(source.location), expected_sha256=expected)
            return Fetched(archive, sha, source)
        if source.kind == "folder":
            archive, sha = pack_folder(Path(source.location))
            return Fetched(archive, sha, source)
        archive, sha, commit = fetch_git(source.location, source.ref, source.subdir,
                                                 commit=locked.commit if locked else "")
        if expected and sha != expected:
            raise IntegrityError(
                f"{source.describe()} at commit {commit[:12]} packs to sha256 {sha}, "
                f"but the lock expects {expected}",
                hint="The repository was rewritten since it was locked; investigate before "
                "running `skillctl update` to accept it.",
            )
        return Fetched(archive, sha, source, commit=commit)

    def _fetch_registry(self, source: Source, locked: Locked | None) -> Fetched:
        from skillctl import versions

        registry = self.registry(source.registry)
        recorded = registry.url if registry.name in ("env", registry.url) else registry.name
        if locked and locked.registry_url and locked.registry_url.rstrip("/") != registry.url.rstrip("/") \
                and not self.force:
            raise SkillctlError(
                f"{source.name} was locked from {locked.registry_url}, but registry "
                f"{recorded!r} is now {registry.url}",
                hint="A skill's registry is never switched silently. Fix the registry's URL in "
                "your config, or pass --force to re-resolve it from the new registry.",
                code="registry_changed",
            )
        if locked and (hit := cache.lookup(locked.sha256)):
            # Exactly what was locked, from the cache: no registry request at all (offline CI).
            return Fetched(hit, locked.sha256, source, locked.version, recorded, registry.url)
        client = self.client(registry)
        info = self._memo(("skill", registry.url, source.name), lambda: client.skill(source.name))
        listed = info.get("versions") or []
        if locked:
            version = locked.version
        else:
            version = versions.resolve(source.spec, listed, dist_tags=info.get("dist_tags"))
            if version is None:
                raise SkillctlError(
                    f"no version of {source.name} matches {source.spec or 'any'!r} on {recorded}",
                    hint=f"Run `skillctl show {source.name}` to see its versions.",
                    code="no_matching_version",
                )
        entry = next((v for v in listed if v.get("version") == version), {})
        listed_sha = entry.get("sha256") or ""
        if locked and listed_sha and listed_sha != locked.sha256:
            raise IntegrityError(
                f"{recorded} lists sha256 {listed_sha} for {source.name} {version}, "
                f"but the lock recorded {locked.sha256}",
                hint="A published version must never change; do not trust this registry's copy.",
            )
        expected = locked.sha256 if locked else listed_sha
        self._check_scan(client, source.name, version, entry)
        archive, sha = self._download(client, source.name, version, expected)
        if entry.get("has_routing_manifest") is False:
            # Nothing to fetch. A registry without the field leaves it missing: ask, as before.
            return Fetched(archive, sha, source, version, recorded, registry.url)
        detail_key = ("version", registry.url, source.name, version)
        return Fetched(archive, sha, source, version, recorded, registry.url,
                       detail=lambda: self._memo(detail_key, lambda: client.version(source.name, version)))

    def _check_scan(self, client, name: str, version: str, entry: dict) -> None:  # noqa: ANN001
        """The registry's security scan: malicious is refused; warn shows the findings and asks
        on a terminal, else needs --force (docs/scanner.md)."""
        verdict = entry.get("scan_verdict") or ""
        if verdict not in ("warn", "malicious"):
            return
        detail = self._memo(("version", client.registry.url, name, version), lambda: client.version(name, version))
        findings = (((detail.get("checks") or {}).get("scan") or {}).get("findings")) or []
        lines = "\n".join(f"  {f.get('severity')} {f.get('rule')} {f.get('path')}:{f.get('line') or ''} "
                          f"{f.get('message')}" for f in findings[:20] if isinstance(f, dict))
        if verdict == "malicious":
            raise SkillctlError(f"{name} {version} was found malicious by the registry's security scan:\n{lines}",
                                hint="It is not installed. If you think the scan is wrong, tell the registry's operators.",
                                code="install.malicious")
        console.warn(f"{name} {version}: the registry's security scan warns:\n{lines}")
        if self.force:
            return
        if sys.stdin.isatty() and sys.stderr.isatty():
            import click

            if click.confirm(f"Install {name} {version} anyway?", default=False, err=True):
                return
        raise SkillctlError(f"{name} {version} has security warnings and was not installed",
                            hint="Read the findings above; pass --force to install it anyway.",
                            code="install.scan_warn")

    def _memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """Registry answers, kept for one run (the concurrent warm-up fills it)."""
        if key not in self._answers:
            self._answers[key] = compute()
        return self._answers[key]

    def warm(self, jobs: list[tuple[Source, Locked | None]]) -> None:
        """Resolve and download registry skills concurrently into the cache.

        Placing stays serial under the file lock; this only makes the serial pass find every
        answer and archive ready. Errors are left for the serial pass to report.
        """
        jobs = [(s, lk) for s, lk in jobs if s.kind == "registry"
                and not (lk and cache.lookup(lk.sha256))]
        if len(jobs) < 2:
            return
        from concurrent.futures import ThreadPoolExecutor, as_completed

        progress, self.progress = self.progress, False  # one overall bar instead of many
        try:
            with ThreadPoolExecutor(max_workers=WARM_WORKERS) as pool, \
                    _overall_bar(len(jobs), enabled=progress) as advance:
                for future in as_completed([pool.submit(self._warm_one, s, lk) for s, lk in jobs]):
                    future.result()
                    advance()
        finally:
            self.progress = progress

    def _warm_one(self, source: Source, locked: Locked | None) -> None:
        try:
            fetched = self._fetch_registry(source, locked)
            if fetched.detail is not None and _routing_wanted():
                fetched.detail()
        except SkillctlError:
            pass

    def _download(self, client, name: str, version: str, expected: str) -> tuple[Path, str]:
        if hit := cache.lookup(expected):
            return hit, expected
        tmp = cache.temp_path()
        try:
            sha = client.download(name, version, tmp, expected_sha256=expected or None,
                                  progress=self.progress)
            if expected and sha != expected:  # belt and braces: the client checks this too
                raise IntegrityError(f"{name} {version}: sha256 {sha}, expected {expected}",
                                     hint="Do not trust this download; try again or report it.")
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return cache.store(tmp, sha), sha


def _routing_wanted() -> bool:
    try:
        import skillctl.routing.manifests  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def _overall_bar(total: int, *, enabled: bool) -> Iterator[Callable[[], None]]:
    if not enabled:
        yield lambda: None
        return
    from rich.progress import Progress

    with Progress(console=console.rich_console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"downloading {total} skills", total=total)
        yield lambda: bar.advance(task)


