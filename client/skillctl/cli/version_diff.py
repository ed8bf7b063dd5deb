"""``--diff`` of ``skillctl outdated`` and ``update``: what changed between the installed version and
the one offered, as the registry's compare page shows it (``GET /skills/NAME/diff/FROM/TO``),
printed as a unified diff with the frontmatter changes that matter first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skillctl import console


def fetch_diffs(ops: Any, pairs: Iterable[tuple[str, str, str]]) -> list[dict]:
    """The registry's diff of each (name, from, to), from the registry each skill is installed
    from; skills from folders, files or git have no registry to ask and are left out."""
    from skillctl.installer.project import source_kind

    pairs, resolver = list(pairs), ops.preparer.resolver
    with ops.session():
        sources = {name: ops.wanted[name].source for name, _, _ in pairs if name in ops.wanted}
    recorded = {name: s.get("registry", "") for name, s in sources.items() if source_kind(s) == "registry"}
    diffs = []
    for name, old, new in pairs:
        if name not in recorded:
            continue
        client = resolver.client(resolver.registry(recorded.get(name, "")))
        diffs.append(client.version_diff(name, old, new))
    return diffs


def print_diff(diff: dict) -> None:
    """One skill's diff on stdout: frontmatter changes (notable ones marked !), then each file."""
    console.out(f"diff {diff['skill']} {diff['from']['version']} → {diff['to']['version']}")
    for change in diff["frontmatter"]:
        mark = "!" if change["concern"] != "other" else " "
        concern = f"  ({change['concern']})" if change["concern"] != "other" else ""
        console.out(f"{mark} {change['field']}: {_value(change['before'])} → {_value(change['after'])}{concern}")
    for entry in diff["files"]:
        if entry["binary"] or entry["too_large"]:
            why = "binary" if entry["binary"] else "too large to compare"
            console.out(f"{entry['status']} {entry['path']} ({why})")
            continue
        console.out(entry["diff"].rstrip("\n"))
        if entry["truncated"]:
            console.out(f"... the diff of {entry['path']} is cut here; the registry's compare page has the link")
    console.out(f"{len(diff['files'])} file(s) changed, {diff['unchanged']} unchanged")


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value)
