"""``skillctl.sandbox``: run a skill's code under Docker or bubblewrap, with limits.

Public API::

    from skillctl.sandbox import RunRequest, run_skill

    result = run_skill(RunRequest(skill_dir=path, runtime=manifest.runtime, input={"q": 1}))
    result.status        # Status.OK | ERROR | TIMEOUT | OOM | OUTPUT_LIMIT | KILLED
    result.to_dict()     # the `skillctl run --json` object

``RunRequest.command`` runs an explicit argv instead of the entrypoint (the worker's test runs:
``test_command(runtime, skill_dir)``). ``backend`` is ``auto`` (Docker when a daemon answers,
else bubblewrap, else ``SandboxUnavailable``: never unsandboxed), ``docker`` or ``bwrap``.
Limits come from the manifest's ``runtime`` block capped by ``HostCaps``. ``janitor.sweep()``
removes what killed executors left behind.
"""

from __future__ import annotations

from skillctl.sandbox.errors import SandboxRequestError, SandboxUnavailable
from skillctl.sandbox.policy import HostCaps, Policy, policy_for
from skillctl.sandbox.result import OutputFile, RunResult, Status
from skillctl.sandbox.runner import (
    BACKENDS,
    RunRequest,
    entrypoint_command,
    run_skill,
    select_backend,
    test_command,
)

__all__ = [
    "BACKENDS",
    "HostCaps",
    "OutputFile",
    "Policy",
    "RunRequest",
    "RunResult",
    "SandboxRequestError",
    "SandboxUnavailable",
    "Status",
    "entrypoint_command",
    "policy_for",
    "run_skill",
    "select_backend",
    "test_command",
]
