"""`skillctl check --fix`: install specs planned, shown, run only with consent, then checked
again (issue 36 item 7). Package managers are fake tools on PATH that record their arguments;
downloads come from a loopback HTTP server the test runs. Nothing is really installed."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.client.cli.test_check import add_skill, project, run  # noqa: F401 (project is a fixture)

FAKE_TOOL = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
[ -n "$FAIL" ] && {{ echo "no such package" >&2; exit 3; }}
for last; do :; done
name=$(basename "${{last%@*}}")
printf '#!/bin/sh\\n' > "{bin}/$name" && chmod +x "{bin}/$name"
"""


@pytest.fixture
def tools(project):  # noqa: F811
    """Makes fake package managers in the PATH folder; ``tools.calls()`` is what they were asked."""
    bin_dir, log = project.parent / "bin", project.parent / "calls.log"

    def make(*names: str) -> None:
        for name in names:
            path = bin_dir / name
            path.write_text(FAKE_TOOL.format(log=log, bin=bin_dir))
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        # The fake tools need a shell and basename; only those are linked in.
        for real in ("sh", "basename", "chmod"):
            if not (bin_dir / real).exists():
                os.symlink(_which(real), bin_dir / real)

    make.calls = lambda: log.read_text().splitlines() if log.exists() else []
    return make


def _which(name: str) -> str:
    import shutil

    found = shutil.which(name, path="/usr/bin:/bin")
    assert found, name
    return found


def fix(capsys, *args):
    code, out, err = run(capsys, "check", *args, "--json")
    return code, json.loads(out), err


SPEC = "requires:\n  bins: [{bin}]\ninstall:\n  - kind: {kind}\n    {key}: {package}\n    bins: [{bin}]\n"


def test_dry_run_prints_the_exact_plan_and_runs_nothing(capsys, project, tools):  # noqa: F811
    tools("brew")
    add_skill(project, "github", SPEC.format(bin="gh", kind="brew", key="formula", package="gh"))
    code, report, _ = fix(capsys, "--fix", "--dry-run")
    assert code == 1 and report["dry_run"] and report["ran"] == []
    [step] = report["plan"]
    assert step["argv"] == ["brew", "install", "gh"] and step["runnable"] and step["skill"] == "github"
    assert tools.calls() == []


def test_without_yes_and_no_terminal_nothing_runs(capsys, project, tools):  # noqa: F811
    tools("brew")
    add_skill(project, "github", SPEC.format(bin="gh", kind="brew", key="formula", package="gh"))
    code, report, err = fix(capsys, "--fix")
    assert code == 1 and report["ran"] == [] and tools.calls() == [] and "--yes" in err


def test_yes_runs_the_plan_and_checks_again(capsys, project, tools):  # noqa: F811
    tools("brew")
    add_skill(project, "github", SPEC.format(bin="gh", kind="brew", key="formula", package="gh"))
    code, report, _ = fix(capsys, "--fix", "--yes")
    assert tools.calls() == ["brew install gh"]
    assert code == 0 and report["ok"] and [r["ok"] for r in report["ran"]] == [True]


def test_a_failed_command_is_reported_and_the_binary_still_missing(capsys, project, tools, monkeypatch):  # noqa: F811
    tools("npm")
    monkeypatch.setenv("FAIL", "1")
    add_skill(project, "lint", SPEC.format(bin="eslint", kind="npm", key="package", package="eslint"))
    code, report, _ = fix(capsys, "--fix", "--yes")
    [ran] = report["ran"]
    assert code == 1 and not ran["ok"] and "no such package" in ran["detail"]
    [skill] = report["skills"]
    assert [f["gate"] for f in skill["failures"]] == ["bins"]


@pytest.mark.parametrize(
    "kind, key, package, argv",
    [
        ("npm", "package", "eslint", ["npm", "install", "-g", "eslint"]),
        ("go", "module", "example.com/cmd/gotool", ["go", "install", "example.com/cmd/gotool@latest"]),
        ("uv", "package", "ruff", ["uv", "tool", "install", "ruff"]),
    ],
)
def test_each_package_manager_runs_its_exact_command(capsys, project, tools, kind, key, package, argv):  # noqa: F811
    tools(argv[0])
    binary = package.rsplit("/", 1)[-1]
    add_skill(project, "tool", SPEC.format(bin=binary, kind=kind, key=key, package=package))
    code, report, _ = fix(capsys, "--fix", "--yes")
    assert report["plan"][0]["argv"] == argv and tools.calls() == [" ".join(argv)] and code == 0


def test_apt_is_never_run_with_sudo_the_plan_says_what_to_run(capsys, project, tools, monkeypatch):  # noqa: F811
    tools("apt-get")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    add_skill(project, "github", SPEC.format(bin="gh", kind="apt", key="package", package="gh"))
    code, report, _ = fix(capsys, "--fix", "--yes")
    [step] = report["plan"]
    assert not step["runnable"] and "sudo apt-get install -y gh" in step["instead"]
    assert report["ran"] == [] and tools.calls() == [] and code == 1


def test_a_spec_for_another_os_or_a_missing_tool_is_unfixable(capsys, project, tools):  # noqa: F811
    add_skill(
        project,
        "mac-only",
        "requires:\n  bins: [pbcopy, jq]\ninstall:\n  - kind: brew\n    formula: jq\n    bins: [jq]\n"
        "  - kind: download\n    url: http://127.0.0.1:9/pbcopy\n    bins: [pbcopy]\n    os: [darwin]\n",
    )
    code, report, _ = fix(capsys, "--fix", "--dry-run")  # no brew on PATH, and this is not darwin
    assert report["plan"] == [] and report["unfixable"] == [{"skill": "mac-only", "binaries": ["pbcopy", "jq"]}]


# --- download -------------------------------------------------------------------------------


@pytest.fixture
def served():
    """A loopback HTTP server answering each path with the bytes the test sets."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield files, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def download_skill(project, url: str, sha256: str = "") -> None:  # noqa: F811
    digest = f"    sha256: {sha256}\n" if sha256 else ""
    add_skill(
        project,
        "fetcher",
        f"requires:\n  bins: [fetchtool]\ninstall:\n  - kind: download\n    url: {url}\n    bins: [fetchtool]\n{digest}",
    )


def test_download_verifies_sha256_unpacks_places_and_rechecks(capsys, project, served, monkeypatch):  # noqa: F811
    files, base = served
    files["/fetchtool-1.0.tar.gz"] = archive = tar_gz({"fetchtool-1.0/bin/fetchtool": b"#!/bin/sh\necho ok\n"})
    home_bin = project.parent / "home" / "bin"
    monkeypatch.setenv("PATH", f"{project.parent / 'bin'}{os.pathsep}{home_bin}")
    download_skill(project, base + "/fetchtool-1.0.tar.gz", hashlib.sha256(archive).hexdigest())
    code, report, _ = fix(capsys, "--fix", "--dry-run")
    [step] = report["plan"]
    assert step["destination"] == str(home_bin) and step["sha256"] == hashlib.sha256(archive).hexdigest()
    assert not home_bin.exists()
    code, report, _ = fix(capsys, "--fix", "--yes")
    assert code == 0 and report["ok"] and report["path_hint"] == ""
    assert (home_bin / "fetchtool").read_bytes() == b"#!/bin/sh\necho ok\n"
    assert os.access(home_bin / "fetchtool", os.X_OK)


def test_download_with_a_wrong_sha256_writes_nothing(capsys, project, served):  # noqa: F811
    files, base = served
    files["/fetchtool"] = b"#!/bin/sh\n"
    download_skill(project, base + "/fetchtool", "0" * 64)
    code, report, _ = fix(capsys, "--fix", "--yes")
    [ran] = report["ran"]
    assert code == 1 and not ran["ok"] and "fix.sha256_mismatch" in ran["detail"]
    assert not (project.parent / "home" / "bin").exists()


def test_download_of_an_archive_with_unsafe_paths_is_refused(capsys, project, served):  # noqa: F811
    files, base = served
    files["/evil.tar.gz"] = tar_gz({"../../escape/fetchtool": b"#!/bin/sh\n"})
    download_skill(project, base + "/evil.tar.gz")
    code, report, _ = fix(capsys, "--fix", "--yes")
    [ran] = report["ran"]
    assert code == 1 and "fix.archive_refused" in ran["detail"] and "archive.path_traversal" in ran["detail"]
    assert not (project.parent / "escape").exists() and not (project.parent / "home" / "bin").exists()


def test_a_single_binary_download_says_when_its_folder_is_not_on_path(capsys, project, served):  # noqa: F811
    files, base = served
    files["/fetchtool"] = body = b"#!/bin/sh\n"
    download_skill(project, base + "/fetchtool", hashlib.sha256(body).hexdigest())
    code, report, _ = fix(capsys, "--fix", "--yes")
    assert [r["ok"] for r in report["ran"]] == [True] and "not on PATH" in report["path_hint"]
    assert code == 1  # still missing: the folder is not on PATH


class _Terminal(io.StringIO):
    """Standard input that is a terminal with the user's answer typed in."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "runs"), [("y\n", True), ("n\n", False)], ids=["yes", "no"])
def test_in_a_terminal_the_plan_is_shown_in_words_and_the_user_asked(capsys, project, tools, monkeypatch, answer, runs):  # noqa: F811
    tools("brew")
    add_skill(project, "github", SPEC.format(bin="gh", kind="brew", key="formula", package="gh"))
    monkeypatch.setattr("sys.stdin", _Terminal(answer))
    code, out, err = run(capsys, "check", "--fix")
    assert "Plan:" in out and "github: brew install gh" in out  # the exact command, before asking
    assert "Run 1 install step(s)?" in err
    assert tools.calls() == (["brew install gh"] if runs else [])
    assert code == (0 if runs else 1)
    if not runs:
        assert "nothing was run" in err


def test_named_skills_limit_the_plan_to_them(capsys, project, tools):  # noqa: F811
    tools("brew")
    add_skill(project, "github", SPEC.format(bin="gh", kind="brew", key="formula", package="gh"))
    add_skill(project, "ripper", SPEC.format(bin="ripgrep", kind="brew", key="formula", package="ripgrep"))
    code, report, _ = fix(capsys, "ripper", "--fix", "--yes")
    assert [s["skill"] for s in report["plan"]] == ["ripper"] and [s["name"] for s in report["skills"]] == ["ripper"]
    assert tools.calls() == ["brew install ripgrep"] and code == 0
