"""registry/diff.py, pure: files added, removed and changed with a unified diff each; binary and
oversized files compared by bytes only; long diffs cut with a mark; frontmatter changes, the
ones about permissions, network, MCP and requirements first."""

from __future__ import annotations

from registry.diff import (
    MAX_DIFF_FILE_BYTES,
    MAX_DIFF_LINES,
    Concern,
    FileStatus,
    manifest_changes,
    version_diff,
)


def test_added_removed_and_changed_files_each_with_a_unified_diff():
    old = {"SKILL.md": b"# A\nsame\n", "scripts/gone.py": b"print('bye')\n", "notes.txt": b"one\ntwo\n"}
    new = {"SKILL.md": b"# A\nsame\n", "scripts/new.py": b"print('hi')\n", "notes.txt": b"one\nthree\n"}
    diff = version_diff(old, new, {}, {})
    by_path = {f.path: f for f in diff.files}
    assert {p: f.status for p, f in by_path.items()} == {
        "notes.txt": FileStatus.CHANGED,
        "scripts/gone.py": FileStatus.REMOVED,
        "scripts/new.py": FileStatus.ADDED,
    }
    assert diff.unchanged == 1
    assert "--- a/notes.txt\n+++ b/notes.txt\n" in by_path["notes.txt"].diff
    assert "-two\n+three\n" in by_path["notes.txt"].diff
    assert by_path["scripts/new.py"].diff.startswith("--- /dev/null\n+++ b/scripts/new.py\n")
    assert by_path["scripts/gone.py"].diff.startswith("--- a/scripts/gone.py\n+++ /dev/null\n")
    assert (by_path["notes.txt"].size_from, by_path["scripts/new.py"].size_from) == (8, None)


def test_a_missing_final_newline_is_marked_as_diff_does():
    diff = version_diff({"a.txt": b"x\n"}, {"a.txt": b"y"}, {}, {})
    assert diff.files[0].diff.endswith("+y\n\\ No newline at end of file\n")


def test_binary_and_oversized_files_are_compared_by_bytes_without_a_diff():
    big = b"line\n" * (MAX_DIFF_FILE_BYTES // 5 + 1)
    diff = version_diff(
        {"logo.png": b"\x89PNG\0\1", "data.csv": big}, {"logo.png": b"\x89PNG\0\2", "data.csv": big + b"x\n"}, {}, {}
    )
    by_path = {f.path: f for f in diff.files}
    assert by_path["logo.png"].binary and by_path["logo.png"].diff == ""
    assert by_path["data.csv"].too_large and by_path["data.csv"].diff == ""


def test_a_long_diff_is_cut_and_says_so():
    new = "".join(f"line {i}\n" for i in range(MAX_DIFF_LINES * 2)).encode()
    found = version_diff({}, {"long.txt": new}, {}, {}).files[0]
    assert found.truncated and found.diff.count("\n") == MAX_DIFF_LINES
    short = version_diff({}, {"short.txt": b"a\n"}, {}, {}).files[0]
    assert not short.truncated


def test_frontmatter_changes_call_out_permissions_network_mcp_and_requirements_first():
    before = {
        "description": "Old words.",
        "allowed_tools": ["Read"],
        "requires": {"bins": ["jq"], "env": []},
        "runtime": {"requires_network": False},
        "mcp": {"command": "", "args": []},
    }
    after = {
        "description": "New words.",
        "allowed_tools": ["Read", "Bash"],
        "requires": {"bins": ["jq", "curl"], "env": ["API_KEY"]},
        "runtime": {"requires_network": True},
        "mcp": {"command": "npx", "args": ["-y", "@acme/server"]},
    }
    changes = manifest_changes(before, after)
    assert [(c.field, c.concern) for c in changes] == [
        ("allowed_tools", Concern.PERMISSIONS),
        ("runtime.requires_network", Concern.NETWORK),
        ("mcp.args", Concern.MCP),
        ("mcp.command", Concern.MCP),
        ("requires.bins", Concern.REQUIREMENTS),
        ("requires.env", Concern.REQUIREMENTS),
        ("description", Concern.OTHER),
    ]
    env = next(c for c in changes if c.field == "requires.env")
    assert (env.before, env.after) == (None, ["API_KEY"])


def test_identical_versions_have_no_changes_and_a_default_value_is_no_change():
    files = {"SKILL.md": b"same\n"}
    diff = version_diff(files, dict(files), {"os": [], "name": "a"}, {"name": "a"})
    assert diff.files == [] and diff.frontmatter == [] and diff.unchanged == 1
    assert diff.to_dict() == {"files": [], "frontmatter": [], "unchanged": 1}
