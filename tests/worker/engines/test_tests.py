"""The tests check's engine on real Docker: passing, failing, timing-out and no-tests skills."""

from __future__ import annotations

import io
import zipfile

import pytest

from skillctl.sandbox import HostCaps
from worker.engines.tests import run_tests

TEST_OK = "import unittest\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(1 + 1, 2)\n"
TEST_FAIL = (
    "import unittest\nclass T(unittest.TestCase):\n    def test_bad(self):\n        self.assertEqual(1 + 1, 3)\n"
)
TEST_SLOW = "import time, unittest\nclass T(unittest.TestCase):\n    def test_slow(self):\n        time.sleep(60)\n"


def archive(files: dict[str, str], extra: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("demo/SKILL.md", f"---\nname: demo\ndescription: d\n{extra}---\n# demo\n")
        for path, text in files.items():
            zf.writestr(f"demo/{path}", text)
    return buffer.getvalue()


@pytest.fixture
def docker(docker_daemon):
    return "docker"


def test_passing_tests(docker):
    result = run_tests(archive=archive({"tests/test_a.py": TEST_OK}), digest="x", backend=docker)
    assert result["result"] == "passed" and result["exit_code"] == 0 and "OK" in result["log"]


def test_failing_tests(docker):
    result = run_tests(archive=archive({"tests/test_a.py": TEST_FAIL}), digest="x", backend=docker)
    assert result["result"] == "failed" and result["exit_code"] == 1 and "AssertionError" in result["log"]


def test_timing_out_tests(docker):
    caps = HostCaps(default_timeout_seconds=3, max_timeout_seconds=3)
    result = run_tests(archive=archive({"tests/test_a.py": TEST_SLOW}), digest="x", backend=docker, caps=caps)
    assert result["result"] == "error" and "timeout" in result["log"]


def test_a_skill_without_tests(docker):
    assert run_tests(archive=archive({"scripts/a.py": "print(1)\n"}), digest="x", backend=docker)["result"] == "none"


def test_runtime_test_command_is_used(docker):
    extra = "runtime:\n  test: python3 scripts/check.py\n"
    result = run_tests(archive=archive({"scripts/check.py": "print('custom ok')\n"}, extra), digest="x", backend=docker)
    assert result["result"] == "passed" and "custom ok" in result["log"]


def test_the_log_is_a_tail_of_at_most_64_kib(docker):
    noisy = "import unittest\nclass T(unittest.TestCase):\n    def test_n(self):\n        print('x' * 200_000)\n"
    caps = HostCaps(max_stream_bytes=1024 * 1024)
    result = run_tests(archive=archive({"tests/test_a.py": noisy}), digest="x", backend=docker, caps=caps)
    assert len(result["log"].encode()) <= 64 * 1024 + 100


def test_tests_that_fill_work_are_an_error_with_limits_disk(docker):
    filler = (
        "import unittest\nclass T(unittest.TestCase):\n    def test_fill(self):\n"
        "        for n in range(256):\n"
        "            with open(f'/work/chunk{n}', 'wb') as f:\n"
        "                f.write(b'x' * (4 << 20))\n"
    )
    caps = HostCaps(default_timeout_seconds=30, work_size_mb=16)
    result = run_tests(archive=archive({"tests/test_a.py": filler}), digest="x", backend=docker, caps=caps)
    assert (result["result"], result["reason"]) == ("error", "limits.disk")
    assert result["log"].endswith("[skillyard: the test run ended with limits.disk]")
