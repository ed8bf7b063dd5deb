"""The routing manifest of a published version: the manifest check's engine (DESIGN §7, §9).

The manifest itself comes from the client's one generator (:mod:`skillctl.routing.llm_manifest`:
an OpenAI-compatible endpoint when ``SKILLYARD_LLM_*`` is set, else, or when it keeps failing,
the offline generator), the same one ``skillctl install`` uses for a folder, archive, URL or git
source, so a skill gets the same keywords from the registry and from a folder. Here: results
are cached by archive digest (same bytes, same manifest) and the semantic centroid is made.

No database here (readthedocs' build engine is the model): the task loads the version, calls
``generate_manifest`` and a service saves what it returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from skillctl.format import load_archive
from skillctl.routing import semantic
from skillctl.routing.llm_manifest import (  # noqa: F401 - the names the worker's callers import
    MAX_KEYWORDS,
    MAX_PHRASES,
    MAX_QUERIES,
    PROMPT_VERSION,
    SCHEMA,
    LLMConfig,
    LLMFailure,
    llm_manifest,
    manifest_fields,
)
from skillctl.routing.manifests import from_skill, merge_registry

CACHE_SECONDS = 30 * 24 * 3600  # the same bytes give the same manifest; a month bounds stale prompts


class Cache(Protocol):
    def get(self, key: str) -> Any: ...
    def set(self, key: str, value: Any, timeout: int | None = ...) -> None: ...


def generate_manifest(
    *,
    archive: bytes,
    digest: str,
    config: LLMConfig | None,
    cache: Cache | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict:
    """The manifest fields of an archive: from the LLM when configured, else offline."""
    report = load_archive(archive)
    if report.manifest is None:
        raise ValueError(f"archive {digest[:12]} has no readable SKILL.md; it should not have been stored")
    if config is None:
        return manifest_fields(report.manifest, report.body, None)
    key = f"manifest:v{PROMPT_VERSION}:{config.model}:{digest}"
    cached = cache.get(key) if cache is not None else None
    if isinstance(cached, dict):
        return cached
    result = manifest_fields(report.manifest, report.body, config, sleep=sleep)
    if cache is not None and result["note"] is None:
        cache.set(key, result, CACHE_SECONDS)
    return result


VECTOR_MODEL = semantic.MODEL_ID  # what routing_vector's vectors are made with (stored beside them)


def vectors_available() -> bool:
    """Can routing_vector make vectors here (the semantic extra installed and on)?"""
    return semantic.available()


def routing_vector(*, archive: bytes, result: Mapping[str, Any]) -> bytes | None:
    """The float32 bytes of the skill's semantic centroid, made as the client makes it (its
    routing manifest merged with this check's ``result``); None without the semantic extra."""
    if not semantic.available():
        return None
    report = load_archive(archive)
    if report.manifest is None:
        return None
    routing = merge_registry(from_skill(report.manifest, report.body), dict(result))
    vectors = semantic.encoder().encode(semantic.centroid_texts(routing))
    return bytes(semantic.centroid(vectors).tobytes())
