"""Concurrent publishes of one version end with exactly one stored version (acceptance 1).

Threads need a database with real row locks and concurrent connections, so this runs in the
PostgreSQL pass (``DATABASE_URL=$SKILLYARD_TEST_POSTGRES_URL pytest tests/registry``, which
scripts/test.sh runs) and is skipped in the SQLite pass, where writers are serialised anyway.
"""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.db import connection

from registry.models import Skill, SkillVersion
from tests.registry.conftest import Api, make_zip, stored_archives

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
THREADS = 8


@pytest.fixture
def on_postgres(postgres_url):
    if connection.vendor != "postgresql":
        pytest.skip("runs in the PostgreSQL pass (DATABASE_URL=$SKILLYARD_TEST_POSTGRES_URL)")


def publish_all_at_once(secret: str, archives: list[bytes], name: str = "racer") -> list[int]:
    barrier = threading.Barrier(len(archives))
    statuses: list[int] = [0] * len(archives)

    def run(i: int) -> None:
        try:
            api = Api(secret)
            barrier.wait()
            statuses[i] = api.publish(name, archives[i]).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(archives))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return statuses


ROUNDS = 20  # one lucky interleaving proves nothing: a race once gave 2 x 409 out of 8


def test_concurrent_first_publish_of_identical_bytes_stores_one_version(on_postgres, alice, token_for):
    secret = token_for(alice, "publish")
    for round_ in range(ROUNDS):
        name = f"racer-{round_}"
        cache.clear()  # the publish throttle (120/hour) is not what this test is about
        statuses = publish_all_at_once(secret, [make_zip(name)] * THREADS, name=name)
        assert sorted(statuses) == [200] * (THREADS - 1) + [201], f"round {round_}: {statuses}"
        assert Skill.objects.filter(name=name).count() == 1
        assert SkillVersion.objects.filter(skill__name=name).count() == 1
    assert len(stored_archives()) == ROUNDS


def test_concurrent_publish_of_one_version_with_other_bytes_keeps_the_first(on_postgres, alice, token_for):
    archives = [make_zip("racer", body=f"# variant {i}\n") for i in range(THREADS)]
    statuses = publish_all_at_once(token_for(alice, "publish"), archives)
    assert sorted(statuses) == [201] + [409] * (THREADS - 1)
    stored = SkillVersion.objects.get(skill__name="racer")
    assert stored_archives() == [stored.archive_key]
