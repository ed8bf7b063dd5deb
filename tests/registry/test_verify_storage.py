"""``manage.py verify_storage``: every archive a version names is read back against its sha256
and size; objects no version names are orphans; any problem is listed and exits 1."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.core.management import call_command
from django.core.management.base import CommandError

from registry.models import SkillVersion
from registry.storage import archive_key
from tests.conftest import ROOT
from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db


def verify(*args: str) -> tuple[str, str | None]:
    """What the command printed, and its error (None: exit 0)."""
    out = io.StringIO()
    try:
        call_command("verify_storage", *args, stdout=out)
    except CommandError as exc:
        return out.getvalue(), str(exc)
    return out.getvalue(), None


def key_of(name: str) -> str:
    return SkillVersion.objects.get(skill__name=name).archive_key


def test_an_empty_registry_verifies(db):
    assert verify() == ("0 archive(s) checked, 0 missing or corrupt, 0 orphan(s)\n", None)


def test_every_published_archive_is_ok(alice_api):
    for name in ("first-skill", "second-skill"):
        assert alice_api.publish(name, make_zip(name)).status_code == 201
    out, error = verify()
    assert error is None
    assert f"ok      {key_of('first-skill')}  first-skill@1.0.0" in out.splitlines()
    assert out.splitlines()[-1] == "2 archive(s) checked, 0 missing or corrupt, 0 orphan(s)"
    assert verify("--quiet") == ("2 archive(s) checked, 0 missing or corrupt, 0 orphan(s)\n", None)


def test_a_corrupt_archive_a_missing_one_and_an_orphan_are_each_reported(alice_api):
    for name in ("kept", "bitrot", "lost"):
        assert alice_api.publish(name, make_zip(name)).status_code == 201
    storage = storages["archives"]
    good = storage.open(key_of("bitrot")).read()
    storage.replace(key_of("bitrot"), ContentFile(good[:-1] + bytes([good[-1] ^ 1])))  # same size, one bit
    storage.delete(key_of("lost"))
    stray = make_zip("stray")
    orphan = archive_key(hashlib.sha256(stray).hexdigest(), "zip")
    storage.save(orphan, ContentFile(stray))
    out, error = verify("--quiet")
    assert error == "3 archive(s) checked, 2 missing or corrupt, 1 orphan(s)"
    assert out.splitlines() == sorted(
        [f"corrupt {key_of('bitrot')}  bitrot@1.0.0", f"missing {key_of('lost')}  lost@1.0.0"],
        key=lambda line: line.split()[1],
    ) + [f"orphan  {orphan}"]


def test_identical_bytes_of_two_versions_are_one_archive_checked_once(alice_api):
    data = make_zip("twice", version=None)
    for version in ("1.0.0", "1.0.1"):
        assert alice_api.publish("twice", data, version=version).status_code == 201
    out, error = verify()
    key = SkillVersion.objects.filter(skill__name="twice").first().archive_key
    assert error is None and out.splitlines()[0] == f"ok      {key}  twice@1.0.0, twice@1.0.1"
    assert "1 archive(s) checked" in out


def test_deleted_versions_are_verified_too(alice_api):
    assert alice_api.publish("gone", make_zip("gone")).status_code == 201
    assert alice_api.delete("/api/v1/skills/gone/versions/1.0.0").status_code in (200, 204)
    storages["archives"].delete(key_of("gone"))
    out, error = verify("--quiet")
    assert error is not None and f"missing {key_of('gone')}  gone@1.0.0" in out


def test_the_command_exits_1_on_a_problem(tmp_path):
    archives = tmp_path / "archives" / "archives" / "sha256" / "ab" / "cd"
    archives.mkdir(parents=True)
    (archives / f"{'ab' * 32}.zip").write_bytes(b"nobody's")
    env = {"SKILLYARD_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "skillyard.settings", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    proc = subprocess.run(
        [sys.executable, "manage.py", "verify_storage"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("orphan  archives/sha256/ab/cd/") and "1 orphan(s)" in proc.stderr
