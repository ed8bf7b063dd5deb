"""The executor: one request in, one RunResult out, on whichever backend is chosen.

It resolves the command and the limits, prepares a fresh /work, hands a Job to the backend,
collects /work/output and removes everything it created, whatever happens.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillctl.sandbox import egress, janitor
from skillctl.sandbox.backend import SKILL_MOUNT, WORK_MOUNT, Backend, Job, RawRun
from skillctl.sandbox.errors import SandboxRequestError, SandboxUnavailable
from skillctl.sandbox.policy import HostCaps, policy_for
from skillctl.sandbox.result import RunResult, Status
from skillctl.sandbox.workdisk import ran_out_of_disk
from skillctl.sandbox.workspace import Workspace, owner_token

BACKENDS = ("auto", "docker", "bwrap")
# runtime -> the interpreter that runs the entrypoint; a version suffix (python3.11, node20)
# names what the skill was written for and runs on the sandbox's interpreter of that family.
INTERPRETERS = {
    "python": ["python3"],
    "python3": ["python3"],
    "node": ["node"],
    "nodejs": ["node"],
    "bash": ["bash"],
    "sh": ["sh"],
}
_RUNTIME = re.compile(r"^(?:(python)(?:3(?:\.\d+)?)?|(python3)|(node|nodejs)(?:[-@]?v?\d+(?:\.\d+){0,2})?|(bash|sh))$")


def _crash_signal(exit_code: int | None) -> str:
    """The fatal signal a crash ended with (bubblewrap reports 128 + signal), or ""."""
    import signal

    crashes = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGTRAP, signal.SIGILL}
    number = exit_code - 128 if exit_code is not None and exit_code > 128 else 0
    return signal.Signals(number).name if number in crashes else ""


def _missing_program(exit_code: int | None, stderr: str, program: str) -> bool:
    """Did the run fail because ``program`` is not in the sandbox? (Docker's runtime answers
    127 "not found"; bubblewrap fails its own exec: "bwrap: execvp PROGRAM: No such file...")."""
    if f"bwrap: execvp {program}: No such file or directory" in stderr:
        return True
    return exit_code == 127 and any(m in stderr for m in ("not found", "No such file or directory"))


def interpreter_for(runtime: str) -> list[str]:
    """argv prefix for a manifest's ``runtime`` (python3.11, python3.12, node, node20, bash)."""
    match = _RUNTIME.match((runtime or "python3").strip().lower())
    if match is None:
        raise SandboxRequestError(
            f"unknown runtime {runtime!r}",
            hint="Use python3 (or python3.X), node (or nodeNN), bash or sh in `runtime.runtime`.",
        )
    return INTERPRETERS[next(group for group in match.groups() if group)]


@dataclass
class RunRequest:
    """One run. ``command`` (argv inside the sandbox) overrides the manifest's entrypoint; the
    worker passes the skill's test command here."""

    skill_dir: Path
    runtime: Any = None  # skillctl.format.RuntimeSpec or None
    command: list[str] | None = None
    input: Any = None  # any JSON value: $SKILL_INPUT and /work/input.json
    backend: str = "auto"
    timeout_seconds: float | None = None  # overrides the manifest, still capped
    memory_mb: int | None = None  # overrides the manifest, still capped
    work_size_mb: int | None = None  # overrides HostCaps.work_size_mb, capped by max_work_size_mb
    caps: HostCaps = field(default_factory=HostCaps)
    output_dir: Path | None = None  # where /work/output files are copied (else only listed)
    image: str | None = None  # docker image (else SKILLYARD_SANDBOX_IMAGE or the default)
    env: dict[str, str] = field(default_factory=dict)  # extra, non-secret environment
    # The user's consent to the network the manifest asks for (--allow-network, or config).
    allow_network: bool = False
    # CIDRs the network may reach although private (config sandbox.network_allow).
    network_allow: list[str] = field(default_factory=list)


def entrypoint_command(runtime: Any) -> list[str]:
    """argv that runs the manifest's entrypoint inside the sandbox."""
    entrypoint = getattr(runtime, "entrypoint", "") or ""
    if not entrypoint:
        raise SandboxRequestError(
            "the skill declares no runtime entrypoint",
            hint="Add `runtime: {entrypoint: scripts/main.py}` to SKILL.md, or give a command: "
            "`skillctl run NAME -- python3 /skill/scripts/main.py`.",
        )
    if entrypoint.startswith("/") or ".." in Path(entrypoint).parts:
        raise SandboxRequestError(
            f"entrypoint {entrypoint!r} is not a path inside the skill",
            hint="Use a relative path such as scripts/main.py.",
        )
    return [*interpreter_for(getattr(runtime, "runtime", "") or "python3"), f"{SKILL_MOUNT}/{entrypoint}"]


def test_command(runtime: Any, skill_dir: Path) -> list[str] | None:
    """argv for the skill's own tests (DESIGN section 9), or None when it has none."""
    if getattr(runtime, "test", ""):
        return ["sh", "-c", f"cd {SKILL_MOUNT} && {runtime.test}"]
    if (skill_dir / "tests").is_dir():
        return ["sh", "-c", f"cd {SKILL_MOUNT} && python3 -m unittest discover -s tests"]
    return None


def select_backend(name: str = "auto", *, image: str | None = None) -> Backend:
    """The backend called ``name``; ``auto`` is Docker when a daemon answers, else bubblewrap."""
    from skillctl.sandbox.bwrap_backend import BwrapBackend
    from skillctl.sandbox.docker_backend import DockerBackend

    if name not in BACKENDS:
        raise SandboxRequestError(f"unknown backend {name!r}", hint=f"Use one of {', '.join(BACKENDS)}.")
    choices: dict[str, list[Backend]] = {"docker": [DockerBackend(image)], "bwrap": [BwrapBackend()]}
    candidates = choices.get(name, [DockerBackend(image), BwrapBackend()])
    for backend in candidates:
        if backend.available():
            return backend
    raise SandboxUnavailable(
        f"no sandbox backend is available (tried {', '.join(b.name for b in candidates)}); "
        "refusing to run the skill unsandboxed",
        hint="Start a Docker daemon, or install bubblewrap (apt-get install bubblewrap) "
        "on a kernel that allows user namespaces.",
    )


def run_skill(request: RunRequest) -> RunResult:
    """Run one skill in a sandbox and return what happened (never raises for the skill's faults)."""
    skill_dir = Path(request.skill_dir).resolve()
    if not skill_dir.is_dir():
        raise SandboxRequestError(f"{skill_dir} is not a folder", hint="Pass a skill folder.")
    command = request.command or entrypoint_command(request.runtime)
    policy = policy_for(
        request.runtime,
        request.caps,
        timeout_seconds=request.timeout_seconds,
        memory_mb=request.memory_mb,
        work_size_mb=request.work_size_mb,
        network_consent=request.allow_network,
    )
    backend = select_backend(request.backend, image=request.image)
    janitor.sweep_once(backend.name)
    run_id = uuid.uuid4().hex[:12]
    host_uid = backend.host_uid()
    started = time.monotonic()
    workspace = Workspace.create(run_id, request.input, uid=host_uid, size_mb=policy.work_size_mb)
    try:
        mounted_skill = skill_dir
        if host_uid is not None and backend.name == "bwrap":
            mounted_skill = workspace.copy_skill(skill_dir, uid=host_uid)
        job = Job(
            command=list(command),
            policy=policy,
            skill_dir=mounted_skill,
            work_dir=workspace.work,
            input_value=request.input,
            run_id=run_id,
            owner=owner_token(),
            host_uid=host_uid,
            extra_env=dict(request.env),
            work_in_memory=workspace.disk.mounted,
        )
        with workspace.disk.watch(job.wake.set), _network(job, workspace, request) as refused:
            raw = backend.run(job)
        raw.disk_full = workspace.disk.full() or ran_out_of_disk(raw.exit_code, raw.stderr.text())
        if refused:
            raw.stderr.feed(("skillctl: the sandbox's network refused " + "; ".join(refused) + "\n").encode())
        if command and _missing_program(raw.exit_code, raw.stderr.text(), command[0]):
            raw.exit_code = 127  # the shell's "command not found", whichever backend said it
            where = (
                "install it on this machine (bubblewrap runs this machine's programs)"
                if backend.name == "bwrap"
                else "run it with an image that has it (--image, or SKILLYARD_SANDBOX_IMAGE)"
            )
            raw.stderr.feed(f"skillctl: the sandbox has no `{command[0]}`; {where}\n".encode())
        elif backend.name == "bwrap" and not raw.oom and (crash := _crash_signal(raw.exit_code)):
            raw.stderr.feed(
                (
                    f"skillctl: the program crashed ({crash}); under bubblewrap a program that runs out of its"
                    f" {policy.memory_mb} MiB memory limit can end this way (runtime.max_memory_mb raises it,"
                    " up to the configured cap)\n"
                ).encode()
            )
        outputs, over = workspace.collect_outputs(
            max_files=policy.output_files, max_bytes=policy.output_bytes, dest=request.output_dir
        )
    finally:
        workspace.remove()
    return RunResult(
        status=_status(raw, outputs_over_limit=over),
        exit_code=raw.exit_code,
        stdout=raw.stdout.text(),
        stderr=raw.stderr.text(),
        duration_ms=int((time.monotonic() - started) * 1000),
        backend=backend.name,
        outputs=outputs,
    )


@contextlib.contextmanager
def _network(job: Job, workspace: Workspace, request: RunRequest) -> Iterator[list[str]]:
    """For a run with network: the egress proxy on a socket in /work/.net, and the command
    wrapped by the forwarder that makes it 127.0.0.1:3128 inside (skillctl.sandbox.egress)."""
    if not job.policy.network:
        yield []
        return
    net = workspace.work / ".net"
    net.mkdir(mode=0o755)
    (net / egress.FORWARDER_NAME).write_text(egress.FORWARDER)
    inside = f"{WORK_MOUNT}/.net"
    job.command = [
        "python3",
        f"{inside}/{egress.FORWARDER_NAME}",
        str(egress.PROXY_PORT),
        f"{inside}/{egress.SOCKET_NAME}",
        "--",
        *job.command,
    ]
    job.extra_env.update(egress.proxy_env())
    with egress.EgressProxy(net / egress.SOCKET_NAME, allow=request.network_allow) as proxy:
        yield proxy.refused


def _status(raw: RawRun, *, outputs_over_limit: bool) -> Status:
    # First: a full /work is why a run that then hung, or was stopped by the watcher, ended.
    if raw.disk_full:
        return Status.DISK_LIMIT
    if raw.timed_out:
        return Status.TIMEOUT
    if raw.output_limited or outputs_over_limit:
        return Status.OUTPUT_LIMIT
    if raw.oom:
        return Status.OOM
    if raw.killed:
        return Status.KILLED
    return Status.OK if raw.exit_code == 0 else Status.ERROR
