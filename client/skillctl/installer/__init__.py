"""install / update / uninstall / verify: the operations behind the CLI commands.

- ``operations``: install, install from the lock (``sync``), update, uninstall (``Operations``)
- ``placement``: the file lock, staging, the journalled swap, crash repair, removal (``Installer``)
- ``swap``: the atomic folder exchange (``renameat2``) and its two-rename fallback
- ``verification``: ``verify`` against the lock, local-change detection
- ``records``: the ``Change`` each operation reports; describing and comparing recorded sources
- ``listing``: ``list_installed`` for ``skillctl list``
- ``hooks``: test-only crash and pause points (``SKILLYARD_TEST_CRASH_AT`` and friends)
"""

from __future__ import annotations

from skillctl.installer.listing import list_installed
from skillctl.installer.operations import Operations
from skillctl.installer.records import Change

__all__ = ["Change", "Operations", "list_installed"]
