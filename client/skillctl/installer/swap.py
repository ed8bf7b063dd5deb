"""Moving a skill folder into place: the atomic exchange, its two-rename fallback, deleting.

File system steps only; the journal that makes a swap recoverable, and the repair of what a
crashed run left, live in :mod:`skillctl.installer.placement`.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from skillctl.installer.crashpoints import NO_EXCHANGE_ENV, crash_point


def exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    if sys.platform != "linux" or os.environ.get(NO_EXCHANGE_ENV):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0  # EINVAL/ENOSYS (file system or kernel without it): use the fallback


def swap_by_renames(new_root: Path, target: Path, old: Path) -> None:
    """Where folders cannot be exchanged: old aside, new in, old deleted (see recover)."""
    if old.exists():
        delete(old)
    had_old = target.exists() or target.is_symlink()
    if had_old:
        os.rename(target, old)
        crash_point("after_rename_old")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(new_root, target)
    crash_point("after_swap")
    if had_old:
        delete(old)
        crash_point("after_delete_old")


def delete(path: Path) -> None:
    """Remove a folder, or a symlink someone put where a skill folder was (never its target)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
