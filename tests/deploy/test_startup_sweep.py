"""Every way the registry starts sweeps what a killed process left before it serves (issue 34,
item 10: 104 MB of upload temp files and `.part` writes survived restarts). What the sweep
removes, and what it leaves to live writers, is tested in tests/registry/test_leftover_sweep.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_sweeps_before_it_serves():
    script = (ROOT / "scripts" / "run.sh").read_text()
    assert script.index("manage.py sweep_uploads") < script.index("uvicorn skillyard.asgi")
    assert "sweep_uploads --age" not in script  # no age rule: leftovers go at once


def test_the_image_sweeps_before_it_serves():
    command = json.loads(re.search(r"^CMD (.+)$", (ROOT / "Dockerfile").read_text(), re.M).group(1))[-1]
    assert command.index("manage.py sweep_uploads") < command.index("scripts/web.sh")  # the server
