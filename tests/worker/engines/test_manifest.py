"""The manifest check's engine against a local fake OpenAI-compatible endpoint."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from worker.engines.manifest import SCHEMA, LLMConfig, generate_manifest

SKILL_MD = """---
name: pdf-rotate
description: Rotate, merge and split PDF files. Use when the user wants to rotate pages of a PDF,
  merge several PDFs into one, or split a PDF into parts. Do not use for scanned image OCR.
---

# PDF rotate

## When to use
- fix upside-down pages in a scanned contract
- combine the monthly reports into one PDF

## Rotating pages
Run `scripts/rotate.py`.
"""


def archive(text: str = SKILL_MD) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("pdf-rotate/SKILL.md", text)
    return buffer.getvalue()


def good_answer(**override) -> str:
    data = {
        "category": "Documents",
        "keywords": [f"kw{i}" for i in range(18)] + ["kw1"],
        "phrases": [f"rotate pdf {i}" for i in range(12)],
        "queries": [f"please rotate page {i} of my pdf" for i in range(22)],
        "negative": "Not for OCR of scanned images.",
    }
    return json.dumps({**data, **override})


class DictCache(dict):
    def set(self, key, value, timeout=None):
        self[key] = value


def config(fake, **kw) -> LLMConfig:
    return LLMConfig(base_url=fake.url, model="test-model", api_key="sk-secret", **{"timeout": 5.0, **kw})


def test_llm_manifest_is_validated_normalised_and_trimmed(fake_llm):
    fake_llm.answer(good_answer())
    result = generate_manifest(archive=archive(), digest="d1", config=config(fake_llm))
    assert result["source"] == "llm" and result["model"] == "test-model" and result["note"] is None
    assert result["category"] == "documents"
    assert len(result["keywords"]) == 18  # the duplicate dropped
    assert len(result["phrases"]) == 12 and len(result["queries"]) == 20  # trimmed to DESIGN's 20
    request = fake_llm.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "test-model"
    assert "pdf-rotate" in request["body"]["messages"][1]["content"]
    assert fake_llm.auth == ["Bearer sk-secret"]


def test_fenced_json_answer_is_accepted(fake_llm):
    fake_llm.answer("Here you go:\n```json\n" + good_answer() + "\n```")
    assert generate_manifest(archive=archive(), digest="d", config=config(fake_llm))["source"] == "llm"


def test_malformed_json_is_asked_again_with_the_reason(fake_llm):
    fake_llm.answer('{"category": "documents", "keywords": [')
    fake_llm.answer(good_answer(keywords=["too", "few"]))
    fake_llm.answer(good_answer())
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm))
    assert result["source"] == "llm"
    assert len(fake_llm.requests) == 3
    follow_up = fake_llm.requests[2]["body"]["messages"][-1]["content"]
    assert "keywords" in follow_up and "not valid" in follow_up


def test_always_invalid_answers_fall_back_to_offline_with_a_note(fake_llm):
    for _ in range(3):
        fake_llm.answer("I cannot help with that.")
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm))
    assert result["source"] == "offline" and "invalid answer" in result["note"]
    assert len(fake_llm.requests) == 3
    assert "sk-secret" not in json.dumps(result)


def test_timeout_is_retried_then_answered(fake_llm):
    fake_llm.answer(good_answer(), delay=1.5)
    fake_llm.answer(good_answer())
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm, timeout=0.5))
    assert result["source"] == "llm" and len(fake_llm.requests) == 2


def test_endpoint_that_always_times_out_falls_back(fake_llm):
    for _ in range(2):
        fake_llm.answer(good_answer(), delay=1.0)
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm, timeout=0.3, attempts=2))
    assert result["source"] == "offline" and "timed out" in result["note"]


def test_429_waits_retry_after_then_succeeds(fake_llm):
    slept: list[float] = []
    fake_llm.raw(429, '{"error": "slow down"}', headers={"Retry-After": "2"})
    fake_llm.answer(good_answer())
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm), sleep=slept.append)
    assert result["source"] == "llm" and slept == [2.0]


def test_429_longer_than_we_wait_falls_back_without_sleeping(fake_llm):
    slept: list[float] = []
    fake_llm.raw(429, "", headers={"Retry-After": "3600"})
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm), sleep=slept.append)
    assert result["source"] == "offline" and "429" in result["note"] and slept == []


@pytest.mark.parametrize("status", [401, 500])
def test_http_errors_fall_back_to_offline(fake_llm, status):
    fake_llm.raw(status, '{"error": "no"}')
    result = generate_manifest(archive=archive(), digest="d", config=config(fake_llm))
    assert result["source"] == "offline" and str(status) in result["note"]
    assert result["queries"]  # the offline manifest is complete, not empty


def test_unreachable_endpoint_falls_back():
    import socket

    with socket.socket() as s:  # a loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key="k", timeout=2)
    result = generate_manifest(archive=archive(), digest="d", config=cfg)
    assert result["source"] == "offline" and "cannot reach" in result["note"]


def test_manifest_is_cached_by_archive_digest(fake_llm):
    cache = DictCache()
    fake_llm.answer(good_answer())
    first = generate_manifest(archive=archive(), digest="same", config=config(fake_llm), cache=cache)
    again = generate_manifest(archive=archive(), digest="same", config=config(fake_llm), cache=cache)
    assert first == again and len(fake_llm.requests) == 1
    fake_llm.answer(good_answer(category="other"))
    other = generate_manifest(archive=archive(), digest="different", config=config(fake_llm), cache=cache)
    assert other["category"] == "other" and len(fake_llm.requests) == 2


def test_failed_llm_answers_are_not_cached(fake_llm):
    cache = DictCache()
    fake_llm.raw(500)
    generate_manifest(archive=archive(), digest="d", config=config(fake_llm), cache=cache)
    assert cache == {}


def test_without_config_the_offline_generator_answers():
    result = generate_manifest(archive=archive(), digest="d", config=None)
    assert result["source"] == "offline" and result["model"] is None
    assert "rotate pages of a PDF" in result["queries"]
    assert "fix upside-down pages in a scanned contract" in result["queries"]
    assert result["negative"] == "scanned image OCR"
    assert {"pdf", "rotate"} <= set(result["keywords"])


def test_config_needs_all_three_settings():
    base = {"SKILLYARD_LLM_BASE_URL": "http://127.0.0.1:1/v1/", "SKILLYARD_LLM_MODEL": "m"}
    assert LLMConfig.from_env(base) is None
    cfg = LLMConfig.from_env({**base, "SKILLYARD_LLM_API_KEY": "k"})
    assert cfg.base_url == "http://127.0.0.1:1/v1" and "k" not in repr(cfg)


def test_schema_refuses_what_routing_cannot_use():
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"category": "x", "keywords": "pdf", "phrases": [], "queries": [], "negative": ""}, SCHEMA)
