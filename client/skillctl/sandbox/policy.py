"""The limits one run gets: what the skill's `runtime` manifest asks for, capped by the host.

A manifest can ask for less than the host allows, never more. ``HostCaps`` holds the host's
ceilings and defaults (config ``[sandbox]`` keys of the same names override them); ``Policy`` is
the resolved set of limits a backend enforces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

MIB = 1024 * 1024


@dataclass(frozen=True)
class HostCaps:
    # A laptop must stay usable while a skill runs; 1 GiB is far above what scripts need.
    max_memory_mb: int = 1024
    # Skills are short tools; anything longer belongs in a real job system.
    max_timeout_seconds: float = 300.0
    # Used when the manifest says nothing.
    default_memory_mb: int = 256
    default_timeout_seconds: float = 30.0
    # One core: a busy loop must not starve the host or the other runs.
    cpus: float = 1.0
    # Enough for a script with a few helper processes and threads; a fork bomb stops here.
    max_processes: int = 64
    # No single file a skill writes (in /work or /tmp) may be bigger.
    max_file_size_mb: int = 64
    # Scratch space in /tmp (a tmpfs: it is memory).
    tmp_size_mb: int = 64
    # All of /work (input, scratch, outputs): a test once wrote 1.5 GB of the host's disk in 2 s.
    work_size_mb: int = 256
    # What a run may ask for /work (`skillctl run --work-size`): a tmpfs, so memory of this host.
    max_work_size_mb: int = 1024
    # Each of stdout and stderr is kept up to this size; more ends the run (output_limit).
    max_stream_bytes: int = 1 * MIB
    # Files collected from /work/output: how many and how many bytes in all.
    max_output_files: int = 100
    max_output_bytes: int = 16 * MIB
    # Whether a manifest's requires_network is honoured at all on this host.
    allow_network: bool = True

    @classmethod
    def from_config(cls, config: Any) -> HostCaps:
        """Caps from the client config's ``sandbox.*`` keys, defaults for the rest."""
        changes = {}
        for f in fields(cls):
            value = config.get(f"sandbox.{f.name}") if config is not None else None
            if value is not None:
                changes[f.name] = type(getattr(cls(), f.name))(value)
        return replace(cls(), **changes)


@dataclass(frozen=True)
class Policy:
    memory_mb: int
    timeout_seconds: float
    cpus: float
    max_processes: int
    file_size_mb: int
    tmp_size_mb: int
    work_size_mb: int
    stream_bytes: int
    output_files: int
    output_bytes: int
    network: bool

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MIB

    @property
    def cpu_seconds(self) -> int:
        """An RLIMIT_CPU backstop: the wall-clock timeout plus a second of slack."""
        return math.ceil(self.timeout_seconds * self.cpus) + 1


def policy_for(
    runtime: Any,
    caps: HostCaps,
    *,
    timeout_seconds: float | None = None,
    memory_mb: int | None = None,
    work_size_mb: int | None = None,
    network_consent: bool = False,
) -> Policy:
    """Limits for one run: explicit arguments, else the manifest, else defaults; all capped.

    Network needs all three: the manifest asks (``requires_network``), the user consents
    (``skillctl run --allow-network`` or ``skills.<name>.network = true``), the host allows it.
    A skill never grants itself the network."""
    asked_timeout = timeout_seconds or getattr(runtime, "timeout_seconds", None)
    asked_memory = memory_mb or getattr(runtime, "max_memory_mb", None)
    return Policy(
        memory_mb=int(min(asked_memory or caps.default_memory_mb, caps.max_memory_mb)),
        timeout_seconds=float(min(asked_timeout or caps.default_timeout_seconds, caps.max_timeout_seconds)),
        cpus=caps.cpus,
        max_processes=caps.max_processes,
        file_size_mb=caps.max_file_size_mb,
        tmp_size_mb=caps.tmp_size_mb,
        work_size_mb=int(min(work_size_mb or caps.work_size_mb, caps.max_work_size_mb)),
        stream_bytes=caps.max_stream_bytes,
        output_files=caps.max_output_files,
        output_bytes=caps.max_output_bytes,
        network=bool(getattr(runtime, "requires_network", False)) and network_consent and caps.allow_network,
    )
