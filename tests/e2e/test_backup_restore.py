"""docs/operations.md's backup and restore, done as written, on real PostgreSQL and moto's S3
server: publish through a live registry, ``pg_dump`` then copy the bucket, restore both into a
fresh database and a fresh bucket, and ``manage.py verify_storage`` finds every archive whole and
nothing extra; the restored registry serves the same bytes; a corrupted archive and an orphan
are each reported (exit 1)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import boto3
import httpx
import psycopg
import pytest

from tests.conftest import ROOT, drop_database, require_service
from tests.e2e.conftest import start_registry
from tests.registry.test_storage import s3_endpoint  # noqa: F401 (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

SKILLS = ("backup-pdf", "backup-csv", "backup-notes")


def database_url(admin_url: str, name: str) -> str:
    parts = urlsplit(admin_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture
def databases(postgres_url):
    names = [f"sy_backup_{uuid.uuid4().hex[:8]}", f"sy_restore_{uuid.uuid4().hex[:8]}"]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE DATABASE {name}")
    yield [database_url(postgres_url, name) for name in names]
    for name in names:
        drop_database(postgres_url, name)


@pytest.fixture
def buckets(s3_endpoint):  # noqa: F811
    s3 = boto3.client(
        "s3", endpoint_url=s3_endpoint, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    names = [f"sy-backup-{uuid.uuid4().hex[:8]}", f"sy-restore-{uuid.uuid4().hex[:8]}"]
    for name in names:
        s3.create_bucket(Bucket=name)
    return s3, names


def registry_env(database: str, endpoint: str, bucket: str) -> dict[str, str]:
    return {
        "DATABASE_URL": database,
        "SKILLYARD_STORAGE": "s3",
        "SKILLYARD_S3_ENDPOINT_URL": endpoint,
        "SKILLYARD_S3_BUCKET": bucket,
        "SKILLYARD_S3_ACCESS_KEY_ID": "k",
        "SKILLYARD_S3_SECRET_ACCESS_KEY": "s",
        "SKILLYARD_SECRET_KEY": "backup-test-" + "x" * 40,
        "SKILLYARD_ALLOWED_HOSTS": "127.0.0.1",
        "SKILLYARD_HTTPS": "0",
        "SKILLYARD_CHECKS_ENABLED": "0",
    }


def verify_storage(env: dict[str, str], data_dir: Path) -> subprocess.CompletedProcess:
    full = {**os.environ, "SKILLYARD_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "skillyard.settings", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "verify_storage"], cwd=ROOT, env=full, capture_output=True, text=True, timeout=300
    )


def skill_folder(parent: Path, name: str) -> Path:
    folder = parent / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill, kept across a restore.\nversion: 1.0.0\n---\n\n# {name}\n"
    )
    (folder / "scripts" / "run.py").write_text(f"print({name!r})\n")
    return folder


def copy_bucket(s3, bucket: str, folder: Path) -> None:  # noqa: ANN001
    """`aws s3 sync s3://BUCKET FOLDER`, as docs/operations.md says, done with boto3."""
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents", []):
            target = folder / item["Key"]
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(bucket, item["Key"], str(target))


def upload_folder(s3, folder: Path, bucket: str) -> None:  # noqa: ANN001
    """`aws s3 sync FOLDER s3://BUCKET`."""
    for path in folder.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), bucket, path.relative_to(folder).as_posix())


def test_a_backup_restores_into_a_fresh_database_and_bucket_with_every_archive_whole(
    tmp_path,
    databases,
    buckets,
    s3_endpoint,  # noqa: F811
):
    require_service("pg_dump and pg_restore", bool(shutil.which("pg_dump") and shutil.which("pg_restore")))
    source_db, restored_db = databases
    s3, (source_bucket, restored_bucket) = buckets
    source = start_registry(
        tmp_path / "source", server="uvicorn", env_extra=registry_env(source_db, s3_endpoint, source_bucket)
    )
    try:
        published = {name: source.publish(skill_folder(tmp_path / "skills", name))["sha256"] for name in SKILLS}
    finally:
        source.stop()

    # Back up: the database first, then the storage (docs/operations.md says why in that order).
    dump = tmp_path / "backup" / "skillyard.dump"
    dump.parent.mkdir()
    subprocess.run(["pg_dump", "--format=custom", f"--file={dump}", source_db], check=True, timeout=120)
    copy_bucket(s3, source_bucket, tmp_path / "backup" / "archives")

    # Restore into a database and a bucket that never saw this registry.
    subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={restored_db}", str(dump)], check=True)
    upload_folder(s3, tmp_path / "backup" / "archives", restored_bucket)
    env = registry_env(restored_db, s3_endpoint, restored_bucket)
    verified = verify_storage(env, tmp_path / "restored")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert sum(line.startswith("ok ") for line in verified.stdout.splitlines()) == len(SKILLS)
    assert verified.stdout.splitlines()[-1] == f"{len(SKILLS)} archive(s) checked, 0 missing or corrupt, 0 orphan(s)"

    restored = start_registry(tmp_path / "restored", server="uvicorn", env_extra=env)
    try:
        for name, sha256 in published.items():
            body = httpx.get(f"{restored.url}/api/v1/skills/{name}/download", timeout=30).content
            assert hashlib.sha256(body).hexdigest() == sha256
    finally:
        restored.stop()

    # A flipped byte in one archive and an object no version names: both reported, exit 1.
    key = next(o["Key"] for o in s3.list_objects_v2(Bucket=restored_bucket)["Contents"])
    data = s3.get_object(Bucket=restored_bucket, Key=key)["Body"].read()
    s3.put_object(Bucket=restored_bucket, Key=key, Body=data[:-1] + bytes([data[-1] ^ 1]))
    stray = f"archives/sha256/00/00/{'0' * 64}.zip"
    s3.put_object(Bucket=restored_bucket, Key=stray, Body=b"no version names me")
    damaged = verify_storage(env, tmp_path / "restored")
    assert damaged.returncode == 1
    assert f"corrupt {key}" in damaged.stdout and f"orphan  {stray}" in damaged.stdout
    assert "1 missing or corrupt, 1 orphan(s)" in damaged.stderr
