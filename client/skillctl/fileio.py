"""Writing and reading the client's own files safely. One place, so every file gets the same care.

``atomic_write``: readers see the old file or the new one, never a part, and a crash leaves no
half-written file (temporary file in the same folder, fsync, one rename). The temporary file is
created 0600, so a secret is never readable by others, even for a moment, before ``mode`` applies.
TOML: ``read_toml`` for reading (tomllib, strict); ``read_toml_document`` for a file a person
also edits (skills.toml, config.toml): edited in place with tomlkit and written back with
``dump_toml``, its comments and layout survive skillctl's changes.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

from skillctl.errors import SkillctlError


def atomic_write(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump_toml(data: dict) -> str:
    """TOML text of a plain dict or of a document from :func:`read_toml_document`."""
    import tomlkit

    return tomlkit.dumps(data)


def read_toml_document(path: Path, *, hint: str, code: str):
    """The TOML file as an editable ``tomlkit`` document (a dict) that keeps its comments and
    layout; an empty document when absent. Invalid TOML is an error with ``hint``."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(path.read_text("utf-8"))
    except FileNotFoundError:
        return tomlkit.document()
    except (TOMLKitError, UnicodeDecodeError) as exc:
        raise SkillctlError(f"{path} is not valid TOML: {exc}", hint=hint, code=code) from exc


def read_toml(path: Path, *, hint: str, code: str) -> dict:
    """The TOML file as a dict ({} when absent); invalid TOML is an error with ``hint``."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SkillctlError(f"{path} is not valid TOML: {exc}", hint=hint, code=code) from exc
