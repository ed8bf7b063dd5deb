"""Atomic writes: whole files only, and the right mode (shared project files vs secrets)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skillctl import fileio
from skillctl.errors import SkillctlError


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_write_replaces_the_whole_file_with_the_given_mode(tmp_path: Path) -> None:
    target = tmp_path / "skills.lock"
    target.write_text("old")
    fileio.atomic_write(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o644
    assert os.listdir(tmp_path) == ["skills.lock"]


def test_secrets_are_written_0600(tmp_path: Path) -> None:
    target = tmp_path / "credentials.toml"
    fileio.atomic_write(target, b"token = 'x'", mode=0o600)
    assert mode(target) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "skills.toml"
    target.write_text("old")

    class Boom(str):
        def encode(self, *args, **kwargs):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        fileio.atomic_write(target, Boom("new"))
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["skills.toml"]


def test_read_toml_absent_is_empty_and_invalid_is_an_error_with_hint(tmp_path: Path) -> None:
    assert fileio.read_toml(tmp_path / "none.toml", hint="h", code="c") == {}
    bad = tmp_path / "bad.toml"
    bad.write_text("[unclosed")
    with pytest.raises(SkillctlError) as err:
        fileio.read_toml(bad, hint="fix it", code="x.invalid")
    assert err.value.code == "x.invalid" and err.value.hint == "fix it"
