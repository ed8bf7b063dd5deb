"""What ``skillctl install ARG`` means: the argument grammar and the :class:`Source` it yields.

Accepted forms, tried in this order:

- ``git+<url>[#<ref>][:<subdir>]`` or ``<https-url>.git[#...]``: a git repository, e.g.
  ``git+https://example.org/team/skills.git#v1:skills/review`` or
  ``git+file:///srv/repo#main:skills/foo``; ``#:skills/foo`` takes the default branch.
- ``https://...``: an archive (.zip or .tar.gz) on a web server. Plain ``http://`` only for
  loopback addresses (tests, local mirrors).
- a path: anything starting with ``/``, ``./``, ``../`` or ``~``, containing a path separator,
  or ending in ``.zip``/``.tar.gz``/``.tgz``: a skill folder or an archive file.
- ``[registry:]name[@spec]``: a skill from a registry, e.g. ``hello``, ``hello@1.2.3``,
  ``hello@^1.2``, ``corp:hello@~1.4``. A bare word is always a registry name: write ``./hello``
  for a folder of that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlparse

from skillctl.errors import UsageError
from skillctl.format.names import NAME_PATTERN
from skillctl.transport import require_safe_url

_REGISTRY_ARG = re.compile(rf"^(?:(?P<registry>[a-z0-9][a-z0-9_.-]*):)?(?P<name>{NAME_PATTERN})(?:@(?P<spec>.+))?$")
_ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
FORMS_HINT = (
    "Use NAME, NAME@1.2.3, NAME@^1.2, REGISTRY:NAME@SPEC, ./folder, file.zip, file.tar.gz, "
    "https://host/skill.zip or git+https://host/repo.git#REF:SUBDIR."
)


class SourceKind(StrEnum):
    REGISTRY = "registry"
    FOLDER = "folder"
    ARCHIVE = "archive"
    URL = "url"
    GIT = "git"


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    name: str = ""  # registry sources: the skill's name
    spec: str = ""  # registry sources: the version spec as given ("" = latest)
    registry: str = ""  # registry sources: the registry's name ("" = recorded or default)
    location: str = ""  # folder/archive: a path; url/git: a URL
    ref: str = ""  # git: branch, tag or commit
    subdir: str = ""  # git: the skill's folder inside the repository

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", SourceKind(self.kind))

    def describe(self) -> str:
        if self.kind is SourceKind.REGISTRY:
            prefix = f"{self.registry}:" if self.registry else ""
            return f"{prefix}{self.name}" + (f"@{self.spec}" if self.spec else "")
        if self.kind is SourceKind.GIT:
            frag = self.ref + (f":{self.subdir}" if self.subdir else "")
            return f"git+{self.location}" + (f"#{frag}" if frag else "")
        return self.location

    def record(self, base: Path) -> dict[str, str]:
        """The skills.toml source keys (paths inside ``base`` are stored relative to it)."""
        if self.kind is SourceKind.REGISTRY:
            return {"registry": self.registry, "version": self.spec}
        if self.kind in (SourceKind.FOLDER, SourceKind.ARCHIVE):
            key = "path" if self.kind is SourceKind.FOLDER else "archive"
            return {key: _relative(Path(self.location), base)}
        if self.kind is SourceKind.URL:
            return {"url": self.location}
        return {"git": self.location, "ref": self.ref, "subdir": self.subdir}

    @classmethod
    def from_record(cls, name: str, record: dict[str, str], base: Path) -> Source:
        if record.get("git"):
            return cls(
                SourceKind.GIT, location=record["git"], ref=record.get("ref", ""), subdir=record.get("subdir", "")
            )
        if record.get("url"):
            return cls(SourceKind.URL, location=record["url"])
        for key, kind in (("archive", SourceKind.ARCHIVE), ("path", SourceKind.FOLDER)):
            if record.get(key):
                return cls(kind, location=str((base / Path(record[key]).expanduser()).resolve()))
        return cls(SourceKind.REGISTRY, name=name, spec=record.get("version", ""), registry=record.get("registry", ""))


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
        return Source(SourceKind.GIT, location=url, ref=ref, subdir=subdir)
    if re.match(r"^https?://", arg):
        if urlparse(arg.partition("#")[0]).path.endswith(".git"):
            url, ref, subdir = _split_git(arg)
            return Source(SourceKind.GIT, location=url, ref=ref, subdir=subdir)
        check_url(arg)
        return Source(SourceKind.URL, location=arg)
    if _looks_like_path(arg):
        path = (cwd / Path(arg).expanduser()).resolve()
        if path.is_dir():
            return Source(SourceKind.FOLDER, location=str(path))
        if path.is_file():
            return Source(SourceKind.ARCHIVE, location=str(path))
        raise UsageError(f"no such file or folder: {arg}", hint=FORMS_HINT, code="source.not_found")
    if match := _REGISTRY_ARG.match(arg):
        return Source(
            SourceKind.REGISTRY,
            name=match["name"],
            spec=(match["spec"] or "").strip(),
            registry=match["registry"] or "",
        )
    raise UsageError(f"cannot tell what to install from {arg!r}", hint=FORMS_HINT, code="source.invalid")


def check_url(url: str) -> None:
    require_safe_url(url, what="the archive URL")
