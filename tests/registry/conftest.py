"""Fixtures for the registry: users, tokens, archives built in memory, and isolated storage.

Archives are built with ``zipfile``/``tarfile`` here (test input), never parsed here: the
registry parses them with ``skillctl.format`` like everything else.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.storage import storages
from rest_framework.test import APIClient

from registry import services
from registry.access import Actor
from registry.models import Owner, SkillVersion


def skill_md(
    name: str, *, version: str | None = "1.0.0", description: str = "", extra: str = "", body: str = ""
) -> str:
    lines = ["---", f"name: {name}", f"description: {description or f'The {name} skill. Use it for tests.'}"]
    if version:
        lines.append(f"version: {version}")
    if extra:
        lines.append(extra.rstrip())
    return "\n".join(lines) + "\n---\n\n" + (body or f"# {name}\n\nDo the thing.\n")


def make_zip(
    name: str,
    *,
    version: str | None = "1.0.0",
    files: dict[str, str] | None = None,
    folder: bool = True,
    text: str | None = None,
    **md,
) -> bytes:
    entries = {"SKILL.md": text if text is not None else skill_md(name, version=version, **md), **(files or {})}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in sorted(entries.items()):
            archive.writestr(f"{name}/{path}" if folder else path, text)
    return buffer.getvalue()


def make_tar_gz(name: str, *, version: str | None = "1.0.0", **md) -> bytes:
    data = skill_md(name, version=version, **md).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo(f"{name}/SKILL.md")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def upload(data: bytes, filename: str = "skill.zip") -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = filename
    return handle


class Api:
    """An APIClient that speaks for one token (or anonymously), with the registry's verbs."""

    def __init__(self, secret: str | None = None, user=None):
        self.client = APIClient()
        if secret:
            self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        elif user is not None:
            self.client.force_login(user)

    def get(self, path: str, **params):
        return self.client.get(path, params)

    def publish(self, name: str, data: bytes, filename: str = "skill.zip", **fields):
        body = {"archive": upload(data, filename), **{k: v for k, v in fields.items() if v is not None}}
        return self.client.post(f"/api/v1/skills/{name}/versions", body, format="multipart")

    def post(self, path: str, body: dict | None = None):
        return self.client.post(path, body or {}, format="json")

    def put(self, path: str, body: dict | None = None):
        return self.client.put(path, body or {}, format="json")

    def delete(self, path: str):
        return self.client.delete(path)


@pytest.fixture(autouse=True)
def _isolated(settings, tmp_path: Path):
    """Fresh throttle counters, archives in a temp folder (unless a test points elsewhere), and
    no publish checks queued unless a test asks (tests/registry/test_checks.py)."""
    cache.clear()
    settings.SKILLYARD_CHECKS_ENABLED = False
    settings.STORAGES = {
        **settings.STORAGES,
        "archives": {
            "BACKEND": "registry.storage.FileSystemArchiveStorage",
            "OPTIONS": {"location": str(tmp_path / "archives")},
        },
    }
    yield
    cache.clear()


def stored_archives() -> list[str]:
    """Every archive key in the archive storage (walks the content-addressed tree)."""
    storage = storages["archives"]
    keys: list[str] = []

    def walk(prefix: str) -> None:
        dirs, files = storage.listdir(prefix)
        keys.extend(f"{prefix}/{f}" for f in files)
        for d in dirs:
            walk(f"{prefix}/{d}")

    if storage.exists("archives"):
        walk("archives")
    return keys


@pytest.fixture
def make_user(db):
    def make(username: str):
        return services.user_create(username=username)

    return make


@pytest.fixture
def token_for(db):
    def mint(user, scope: str = "publish", owner: str | None = None, expires_days: int | None = None) -> str:
        target = Owner.objects.get(name=owner) if owner else None
        _, secret = services.token_create(actor=Actor(user), scope=scope, owner=target, expires_days=expires_days)
        return secret

    return mint


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def alice_api(alice, token_for) -> Api:
    return Api(token_for(alice, "admin"))


@pytest.fixture
def bob_api(bob, token_for) -> Api:
    return Api(token_for(bob, "admin"))


@pytest.fixture
def anon_api() -> Api:
    return Api()


def version_count(name: str) -> int:
    return SkillVersion.objects.filter(skill__name=name).count()
