from __future__ import annotations

import io

import pytest
from django.test import Client

from registry import services
from registry.access import Actor
from tests.registry.conftest import _isolated, make_zip  # noqa: F401 (isolated storage and counters)


def upload(data: bytes, name: str = "s.zip") -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = name
    return handle


@pytest.fixture
def alice(db):
    user = services.user_create(username="alice")
    user.set_password("pw-alice-123")
    user.save()
    return user


@pytest.fixture
def publish(alice):
    def run(name: str, *, user=None, **kw):
        files = kw.pop("files", None)
        visibility, owner = kw.pop("visibility", None), kw.pop("owner", None)
        return services.skill_version_publish(
            actor=Actor(user or alice),
            name=name,
            visibility=visibility,
            owner=owner,
            archive=upload(make_zip(name, files=files, **kw)),
        )

    return run


@pytest.fixture
def signed_in(alice) -> Client:
    browser = Client()
    assert browser.login(username="alice", password="pw-alice-123")
    return browser


def finish_checks(name: str, version: str = "1.0.0", **results: dict) -> None:
    """Finish a version's checks (``scan=``, ``tests=``, ``manifest=``) with these results, as
    the worker would (its engines' result shapes)."""
    from registry.models import VersionCheck

    for check in VersionCheck.objects.filter(version__skill__name=name, version__version=version):
        if check.name in results:
            services.check_finish(check=check, result=results[check.name])
