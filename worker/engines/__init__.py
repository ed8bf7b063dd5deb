"""The publish checks' engines: archive bytes in, a result dict out; no database access.

``worker.tasks`` loads the version, calls one of these and saves the result through
``registry.services`` (readthedocs' split between the build engine and the task)."""

from __future__ import annotations

from collections.abc import Callable


def engine(name: str) -> Callable[..., dict]:
    if name == "scan":
        from worker.engines.scan import scan

        return scan
    if name == "manifest":
        from django.core.cache import cache

        from worker.engines.manifest import LLMConfig, generate_manifest

        return lambda *, archive, digest: generate_manifest(
            archive=archive, digest=digest, config=LLMConfig.from_env(), cache=cache
        )
    if name == "tests":
        from django.conf import settings

        from worker.engines.tests import run_tests

        return lambda *, archive, digest: run_tests(
            archive=archive, digest=digest, backend=settings.SKILLYARD_TESTS_BACKEND
        )
    raise KeyError(name)
