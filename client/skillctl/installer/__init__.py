"""Installing skills: from an install argument to a folder in place, recorded in the lock.

- ``arguments``: what ``skillctl install ARG`` means (``Source``, ``SourceKind``, ``parse_source``)
- ``fetchers``: each non-registry kind into a checked archive in the cache (``FETCHERS``)
- ``resolution``: registry sources: registry, version, scan verdict, download (``RegistryResolver``)
- ``preparer``: any source into the cache (``Preparer``, pip's ``RequirementPreparer``)
- ``placement``: the file lock, staging, the journalled swap, crash repair, removal (``Placer``)
- ``swap``: the atomic folder exchange (``renameat2``) and its two-rename fallback
- ``verification``: ``verify`` against the lock, local-change detection (``Verifier``)
- ``operations``: install, install from the lock, update, uninstall, verify (``Operations``)
- ``state``, ``project``: a scope's skills.toml and skills.lock, in memory and on disk
- ``cache``: downloaded archives, content-addressed by sha256
- ``records``: the ``Change`` each operation reports (``Action``), ``LocalChangesError``
- ``listing``: ``list_installed`` for ``skillctl list``
- ``crashpoints``: test-only crash and pause points (``SKILLYARD_TEST_CRASH_AT`` and friends)
"""

from __future__ import annotations

from skillctl.installer.listing import list_installed
from skillctl.installer.operations import Operations
from skillctl.installer.records import Action, Change, LocalChangesError

__all__ = ["Action", "Change", "LocalChangesError", "Operations", "list_installed"]
