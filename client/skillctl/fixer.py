"""Install specs run with consent: what ``skillctl check --fix`` plans and runs (seed 002).

For each binary a skill's ``bins``/``anyBins`` gate misses, the first ``install`` spec that fits
this OS and whose tool is here (brew, apt-get, npm, go, uv; ``download`` needs none) becomes a
:class:`Step`: the exact argv, or for a download the URL, where it goes and its sha256. The CLI
shows the plan, asks, and only then calls :func:`run_step`. Nothing here runs ``sudo``: a step
that needs root says what to run instead. A download is verified against the spec's sha256
before anything is written, and an archive goes through ``skillctl.format``'s archive checks
(paths, links, sizes), the same ones skill archives pass.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from skillctl.errors import SkillctlError
from skillctl.gating import on_path, tool_present

if TYPE_CHECKING:
    from skillctl.format.manifest import InstallSpec, Manifest

# A package manager installing one tool takes seconds to a few minutes; past this, it hangs.
COMMAND_TIMEOUT_SECONDS = 900
# The largest tool download accepted (single binaries of Go/Rust CLIs are 10-100 MiB).
MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024
# What of a failed command's output is kept for the report: its last lines say why.
OUTPUT_TAIL_CHARS = 2000
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


class StepKind(StrEnum):
    BREW = "brew"
    APT = "apt"
    NPM = "npm"
    GO = "go"
    UV = "uv"
    DOWNLOAD = "download"


@dataclass
class Step:
    """One install spec, ready to show and to run."""

    skill: str
    kind: StepKind
    binaries: list[str]  # what it provides that the skill misses
    label: str = ""
    argv: list[str] = field(default_factory=list)  # a package manager's exact command
    url: str = ""  # download: from where
    sha256: str = ""  # download: the digest it must have ("" when the spec gives none)
    destination: str = ""  # download: the folder the binaries go to
    instead: str = ""  # why it cannot run here, and what the user can run themselves

    @property
    def runnable(self) -> bool:
        return not self.instead

    def describe(self) -> str:
        if self.kind is StepKind.DOWNLOAD:
            digest = f"sha256 {self.sha256}" if self.sha256 else "no sha256 given: not verified"
            return f"download {self.url} -> {self.destination}/{{{','.join(self.binaries)}}} ({digest})"
        return " ".join(self.argv)

    def to_dict(self) -> dict:
        return {**asdict(self), "kind": self.kind.value, "runnable": self.runnable, "describe": self.describe()}


@dataclass
class StepResult:
    step: Step
    ok: bool
    detail: str = ""  # the command's output tail, or why the download was refused

    def to_dict(self) -> dict:
        step = self.step
        return {
            "skill": step.skill,
            "kind": step.kind.value,
            "describe": step.describe(),
            "ok": self.ok,
            "detail": self.detail,
        }


def bin_dir() -> Path:
    """Where downloaded binaries go: ``$SKILLYARD_HOME/bin``, else ``~/.local/bin``."""
    home = os.environ.get("SKILLYARD_HOME")
    return Path(home).expanduser() / "bin" if home else Path.home() / ".local" / "bin"


def plan_skill(
    name: str, manifest: Manifest, missing: list[list[str]], *, env: Mapping[str, str], platform: str
) -> tuple[list[Step], list[str]]:
    """(steps, binaries no spec here provides) for the missing binaries: each group is one
    ``bins`` entry, or an ``anyBins`` list of which one is enough."""
    steps: list[Step] = []
    unfixable: list[str] = []
    for group in missing:
        if any(set(group) & set(s.binaries) for s in steps):
            continue  # an earlier step of this skill provides it
        spec = _fitting_spec(manifest.install, group, env, platform)
        if spec is None:
            unfixable.append(" or ".join(group))
        else:
            steps.append(_step(name, spec, group))
    return steps, unfixable


def _fitting_spec(specs, wanted: list[str], env: Mapping[str, str], platform: str) -> InstallSpec | None:
    for spec in specs:
        provides = spec.bins or [spec.package]
        if spec.kind not in set(StepKind) or not set(provides) & set(wanted):
            continue
        if (not spec.os or platform in spec.os) and tool_present(spec, env):
            return spec
    return None


def _step(skill: str, spec: InstallSpec, wanted: list[str]) -> Step:
    kind = StepKind(spec.kind)
    provides = [b for b in (spec.bins or [spec.package]) if b in wanted] or wanted[:1]
    step = Step(skill, kind, provides if kind is not StepKind.DOWNLOAD else spec.bins or wanted[:1], spec.label)
    if kind is StepKind.DOWNLOAD:
        step.url, step.sha256, step.destination = spec.package, spec.sha256, str(bin_dir())
        return step
    step.argv = {
        StepKind.BREW: ["brew", "install", spec.package],
        StepKind.APT: ["apt-get", "install", "-y", spec.package],
        StepKind.NPM: ["npm", "install", "-g", spec.package],
        StepKind.GO: ["go", "install", spec.package if "@" in spec.package else f"{spec.package}@latest"],
        StepKind.UV: ["uv", "tool", "install", spec.package],
    }[kind]
    if kind is StepKind.APT and os.geteuid() != 0:
        step.instead = f"apt-get needs root and skillctl never runs sudo: run `sudo {' '.join(step.argv)}` yourself"
    return step


# --- running ------------------------------------------------------------------------------


def run_step(step: Step, *, env: Mapping[str, str]) -> StepResult:
    """Run one confirmed step; a failure is a result, never an exception."""
    if not step.runnable:
        return StepResult(step, False, step.instead)
    try:
        if step.kind is StepKind.DOWNLOAD:
            return StepResult(step, True, download(step))
        return _run_command(step, env)
    except SkillctlError as err:
        return StepResult(step, False, f"{err.message} [{err.code}]")


def _run_command(step: Step, env: Mapping[str, str]) -> StepResult:
    try:
        done = subprocess.run(
            step.argv, env=dict(env), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return StepResult(step, False, f"{step.argv[0]}: {err}")
    tail = (done.stdout + done.stderr)[-OUTPUT_TAIL_CHARS:]
    return StepResult(step, done.returncode == 0, tail if done.returncode else "")


def download(step: Step) -> str:
    """Fetch, verify, unpack when an archive, and place the step's binaries; where they went."""
    with tempfile.TemporaryDirectory(prefix="skillctl-fix-") as tmp:
        file = Path(tmp) / "download"
        digest = _fetch(step.url, file)
        if step.sha256 and digest != step.sha256:
            raise SkillctlError(
                f"{step.url} has sha256 {digest}, the skill's install spec says {step.sha256}",
                hint="Nothing was installed. The file changed or was tampered with; tell the skill's author.",
                code="fix.sha256_mismatch",
            )
        found = _binaries(file, Path(tmp) / "unpacked", step)
        target = Path(step.destination)
        target.mkdir(parents=True, exist_ok=True)
        for name, source in found.items():
            _place(source, target / name)
    return f"installed {', '.join(found)} in {target}"


def _fetch(url: str, into: Path) -> str:
    from skillctl.transport import check_request, httpx, require_safe_url

    require_safe_url(url, what="the download URL")
    sha, size = hashlib.sha256(), 0
    try:
        with (
            httpx.Client(follow_redirects=True, timeout=60, event_hooks={"request": [check_request]}) as http,
            http.stream("GET", url) as response,
            into.open("wb") as out,
        ):
            if response.status_code != 200:
                raise SkillctlError(f"GET {url} answered {response.status_code}", code="fix.download_failed")
            for chunk in response.iter_bytes(64 * 1024):
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise SkillctlError(
                        f"{url} is over {MAX_DOWNLOAD_BYTES // 2**20} MiB", code="fix.download_too_large"
                    )
                sha.update(chunk)
                out.write(chunk)
    except httpx.HTTPError as err:
        raise SkillctlError(f"could not download {url}: {err}", code="fix.download_failed") from err
    return sha.hexdigest()


def _binaries(file: Path, unpacked: Path, step: Step) -> dict[str, Path]:
    """name -> file: the download itself (one binary), or each named binary in the archive."""
    if not step.url.lower().split("?")[0].endswith(ARCHIVE_SUFFIXES):
        return {step.binaries[0]: file}
    from skillctl.format import ArchiveError, extract_archive

    try:
        extract_archive(file, unpacked, skill=False)
    except ArchiveError as err:
        raise SkillctlError(
            f"refused the archive from {step.url}: {err}",
            hint="Nothing was installed: it breaks the archive rules (unsafe paths, links, sizes).",
            code="fix.archive_refused",
        ) from err
    found = {p.name: p for p in sorted(unpacked.rglob("*")) if p.is_file() and p.name in step.binaries}
    if missing := [b for b in step.binaries if b not in found]:
        raise SkillctlError(f"the archive from {step.url} holds no {', '.join(missing)}", code="fix.binary_missing")
    return found


def _place(source: Path, target: Path) -> None:
    """Copy to a temporary name beside ``target``, make it executable, then one rename."""
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(source, partial)
    os.chmod(partial, 0o755)
    os.replace(partial, target)


def path_hint(env: Mapping[str, str]) -> str:
    """A note when downloaded binaries would not be found: their folder is not on PATH."""
    folder = str(bin_dir())
    on = folder in env.get("PATH", "").split(os.pathsep)
    return "" if on else f'{folder} is not on PATH: add it (export PATH="{folder}:$PATH") so the skill finds them'


def missing_binaries(manifest: Manifest, env: Mapping[str, str]) -> list[list[str]]:
    """The groups of binaries the skill misses: each ``bins`` entry alone, ``anyBins`` together."""
    groups = [[b] for b in manifest.requires.bins if not on_path(b, env)]
    wanted = manifest.requires.any_bins
    if wanted and not any(on_path(b, env) for b in wanted):
        groups.append(list(wanted))
    return groups
