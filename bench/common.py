"""What more than one bench script needs."""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path


def skillctl_code() -> Path:
    """The skillctl package the runs import (PYTHONPATH decides, as for the subprocesses), with
    its bytecode compiled as an installed package has it: under PYTHONDONTWRITEBYTECODE every
    fresh process would otherwise compile the modules it imports from source (~50 ms)."""
    spec = importlib.util.find_spec("skillctl")
    assert spec is not None and spec.origin is not None
    package = Path(spec.origin).parent
    compileall.compile_dir(package, quiet=1)
    return package
