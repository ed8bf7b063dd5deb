"""The base install is the thin client: no Django, Celery, boto3 or docker (STYLE principle 8)."""

from __future__ import annotations

import ast
import subprocess
import venv
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]
SERVER_ONLY = ("django", "celery", "boto3", "botocore", "docker", "rest_framework", "storages")


@pytest.fixture(scope="module")
def thin_venv(tmp_path_factory) -> Path:
    """A fresh virtualenv with only `pip install skillyard` (no extras)."""
    env_dir = tmp_path_factory.mktemp("thin") / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # pip builds in the source tree (build/, *.egg-info): two xdist workers that each got one of
    # this module's tests would build there at once and break each other's build.
    with FileLock(tmp_path_factory.getbasetemp().parent / "skillyard-thin-install.lock"):
        proc = subprocess.run(
            [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert proc.returncode == 0, proc.stderr
    return env_dir


@pytest.mark.slow
def test_base_install_has_no_server_packages(thin_venv: Path) -> None:
    probe = "import importlib.util as u, sys; print([m for m in sys.argv[1:] if u.find_spec(m)])"
    out = subprocess.run(
        [str(thin_venv / "bin" / "python"), "-c", probe, *SERVER_ONLY],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_skillctl_help_and_import_work_without_django(thin_venv: Path, tmp_path: Path) -> None:
    help_out = subprocess.run(
        [str(thin_venv / "bin" / "skillctl"), "--help"], capture_output=True, text=True, cwd=tmp_path
    )
    assert help_out.returncode == 0, help_out.stderr
    assert "validate" in help_out.stdout and "Exit codes" in help_out.stdout

    code = (
        "import sys, skillctl, skillctl.format, skillctl.cli.main\n"
        "from skillctl.format import Manifest, load_skill\n"
        "assert 'django' not in sys.modules, 'django was imported'\n"
        "print(skillctl.__version__)"
    )
    imp = subprocess.run([str(thin_venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert imp.returncode == 0, imp.stderr


@pytest.mark.slow
def test_thin_client_validates_a_skill(thin_venv: Path, tmp_path: Path) -> None:
    skill = tmp_path / "hello"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello.\n---\n# Hello\n")
    proc = subprocess.run(
        [str(thin_venv / "bin" / "skillctl"), "validate", "--json", str(skill)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"valid": true' in proc.stdout.replace('"valid":true', '"valid": true')


FORBIDDEN_IN_CLIENT = {"django", "registry", "catalog", "worker", "celery", "boto3", "skillyard"}


def test_client_package_never_imports_server_code() -> None:
    """A static guard: no module of the client imports Django or the server apps, even lazily."""
    offenders = []
    for path in (ROOT / "client" / "skillctl").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN_IN_CLIENT]
    assert offenders == []


def imported_modules(path: Path):
    """(line, module) for each absolute import in a file; `from skillctl import x` as skillctl.x."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "skillctl" else [f"skillctl.{a.name}" for a in node.names]
            yield from ((node.lineno, name) for name in names)


# What each server package may import from the client (STYLE principle 8): the registry the pure
# format code and routing's scoring (the one search of API, catalog and CLI: registry/search.py);
# the catalog the same; the worker also the sandbox (a skill's own tests) and routing's manifests.
SERVER_MAY_IMPORT = {
    "registry": ("skillctl.format", "skillctl.routing"),
    "skillyard": ("skillctl.format",),
    "catalog": ("skillctl.format", "skillctl.routing"),
    "worker": ("skillctl.format", "skillctl.routing", "skillctl.sandbox"),
}


@pytest.mark.parametrize("package", sorted(SERVER_MAY_IMPORT))
def test_server_imports_only_its_share_of_the_client(package: str) -> None:
    allowed = SERVER_MAY_IMPORT[package]
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        for line, name in imported_modules(path):
            if name.split(".")[0] == "skillctl" and not name.startswith(tuple(a + "." for a in allowed) + allowed):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert offenders == []


def test_the_format_package_imports_nothing_else_of_the_client() -> None:
    """The registry imports skillctl.format; so that is all it gets, transitively too."""
    offenders = []
    for path in (ROOT / "client" / "skillctl" / "format").rglob("*.py"):
        for line, module in imported_modules(path):
            if module.split(".")[0] == "skillctl" and not module.startswith("skillctl.format"):
                offenders.append(f"{path.name}:{line}: {module}")
    assert offenders == []


@pytest.mark.slow
def test_the_wheel_ships_the_licence_and_the_typing_marker(thin_venv: Path) -> None:
    site = next((thin_venv / "lib").glob("python3*/site-packages"))
    assert (site / "skillctl" / "py.typed").is_file()
    licences = list(site.glob("skillyard-*.dist-info/**/LICENSE"))
    assert licences and "Apache License" in licences[0].read_text()
