"""Install arguments: which source each form means, and the mistakes it refuses."""

from __future__ import annotations

import pytest

from skillctl.errors import ExitCode, SkillctlError
from skillctl.installer.arguments import Source, parse_source


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("hello", Source("registry", name="hello")),
        ("hello@1.2.3", Source("registry", name="hello", spec="1.2.3")),
        ("hello@^1.2", Source("registry", name="hello", spec="^1.2")),
        ("hello@>=1,<2", Source("registry", name="hello", spec=">=1,<2")),
        ("corp:hello@~1.4", Source("registry", name="hello", spec="~1.4", registry="corp")),
        ("https://example.org/x/hello.zip", Source("url", location="https://example.org/x/hello.zip")),
        ("http://127.0.0.1:8000/h.tar.gz", Source("url", location="http://127.0.0.1:8000/h.tar.gz")),
        (
            "git+file:///srv/repo#v1:skills/foo",
            Source("git", location="file:///srv/repo", ref="v1", subdir="skills/foo"),
        ),
        ("git+https://example.org/r.git", Source("git", location="https://example.org/r.git")),
        ("https://example.org/r.git#main", Source("git", location="https://example.org/r.git", ref="main")),
        (
            "git+ssh://git@example.org/r.git#:skills/a/",
            Source("git", location="ssh://git@example.org/r.git", subdir="skills/a"),
        ),
    ],
)
def test_parse_source_forms(arg, expected):
    assert parse_source(arg) == expected


def test_paths_are_folders_or_archives(tmp_path):
    (tmp_path / "hello").mkdir()
    (tmp_path / "hello.zip").write_bytes(b"PK")
    assert parse_source("./hello", cwd=tmp_path) == Source("folder", location=str(tmp_path / "hello"))
    assert parse_source("hello.zip", cwd=tmp_path).kind == "archive"
    assert parse_source(str(tmp_path / "hello")).kind == "folder"
    # A bare word is a registry name even when a folder of that name is here.
    assert parse_source("hello", cwd=tmp_path).kind == "registry"


@pytest.mark.parametrize("arg", ["http://example.org/x.zip", "ftp://example.org/x.zip"])
def test_insecure_urls_are_refused(arg):
    with pytest.raises(SkillctlError) as err:
        parse_source(arg)
    assert err.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize("arg", ["Hello", "hello world", "-x", "./missing-folder", "hello--x"])
def test_garbage_and_missing_paths_are_usage_errors(arg, tmp_path):
    with pytest.raises(SkillctlError) as err:
        parse_source(arg, cwd=tmp_path)
    assert err.value.exit_code == ExitCode.USAGE and err.value.hint


def test_records_round_trip_with_relative_paths(tmp_path):
    folder = tmp_path / "skills" / "notes"
    folder.mkdir(parents=True)
    src = Source("folder", location=str(folder))
    record = src.record(tmp_path)
    assert record == {"path": "skills/notes"}
    assert Source.from_record("notes", record, tmp_path) == src
    git = Source("git", location="file:///r", ref="v1", subdir="a")
    assert Source.from_record("a", git.record(tmp_path), tmp_path) == git
    reg = Source("registry", name="hello", spec="^1.0", registry="corp")
    assert Source.from_record("hello", reg.record(tmp_path), tmp_path) == reg
