"""The normalised manifest: every field a skill can declare, typed, from every system we follow.

Built by :func:`skillctl.format.parse.normalise` from the frontmatter (and ``skill.json``);
type problems become findings there, never exceptions. Everything downstream (registry,
gating, routing, sandbox) reads this, never the raw YAML.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


@dataclass
class Requires:
    bins: list[str] = field(default_factory=list)  # all must be on PATH (`binary` is an alias)
    any_bins: list[str] = field(default_factory=list)  # at least one must be on PATH
    env: list[str] = field(default_factory=list)  # environment variables (or config) that must be set
    config: list[str] = field(default_factory=list)  # config keys that must be truthy
    skills: list[str] = field(default_factory=list)  # other skills that must be installed
    mcp: list[str] = field(default_factory=list)  # MCP servers the agent must have (ComposioHQ)


@dataclass
class InstallSpec:
    """How to install something a skill needs (brew/apt/npm/go/uv/download)."""

    kind: str  # brew | apt | npm | go | uv | download
    package: str = ""  # formula / package / module / url, by kind
    bins: list[str] = field(default_factory=list)  # binaries this install provides
    label: str = ""
    os: list[str] = field(default_factory=list)
    id: str = ""
    sha256: str = ""  # download: the file's digest, verified before anything is written

    def command(self) -> str:
        """The shell command a user would run for this spec."""
        return {
            "brew": f"brew install {self.package}",
            "apt": f"sudo apt-get install {self.package}",
            "npm": f"npm install -g {self.package}",
            "go": f"go install {self.package}",
            "uv": f"uv tool install {self.package}",
            "download": f"download {self.package}",
        }.get(self.kind, f"{self.kind} {self.package}".strip())


@dataclass
class VarSpec:
    description: str = ""
    default: str | None = None
    required: bool = False
    secret: bool = False


@dataclass
class McpSpec:
    command: str = ""
    args: list[str] = field(default_factory=list)
    url: str = ""  # a remote server instead of a command (`server`/`url`)
    transport: str = ""  # stdio | http | sse, when declared
    env: dict[str, str] = field(default_factory=dict)  # values may reference ${VAR}
    startup_timeout: float | None = None  # seconds
    idle_timeout: float | None = None  # seconds


@dataclass
class Triggers:
    """The author's own "use me" words and patterns. Routing uses the first ``MAX_WORDS`` words
    (keywords, then verbs) and ``MAX_PATTERNS`` patterns: real skills list up to 24 words, and a
    skill listing hundreds of common words would claim most messages."""

    MAX_WORDS: ClassVar[int] = 32
    MAX_PATTERNS: ClassVar[int] = 8

    keywords: list[str] = field(default_factory=list)  # matched on word boundaries
    verbs: list[str] = field(default_factory=list)  # matched on word boundaries
    patterns: list[str] = field(default_factory=list)  # regular expressions (validated)


@dataclass
class ConditionalNext:
    when: str
    skill: str


@dataclass
class RuntimeSpec:
    """How `skillctl run` and the worker execute the skill's code (DESIGN section 8)."""

    runtime: str = "python3"
    entrypoint: str = ""  # a path inside the skill, e.g. scripts/main.py
    requires_network: bool = False
    requires_write_access: bool = False
    max_memory_mb: int | None = None
    timeout_seconds: float | None = None
    test: str = ""  # the command that runs the skill's own tests


@dataclass
class Manifest:
    # The Agent Skills specification
    name: str = ""
    description: str = ""
    license: str = ""
    compatibility: str = ""
    allowed_tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # Extensions (DESIGN section 3)
    version: str = ""
    homepage: str = ""
    emoji: str = ""
    os: list[str] = field(default_factory=list)  # darwin | linux | win32 (normalised)
    requires: Requires = field(default_factory=Requires)
    primary_env: str = ""
    install: list[InstallSpec] = field(default_factory=list)
    always: bool = False
    skill_key: str = ""
    vars: dict[str, VarSpec] = field(default_factory=dict)
    mcp: McpSpec | None = None
    next_skill: str = ""
    conditional_next_skills: list[ConditionalNext] = field(default_factory=list)
    triggers: Triggers = field(default_factory=Triggers)
    toolsets: list[str] = field(default_factory=list)  # "module:Class"
    scripts: dict[str, str] = field(default_factory=dict)  # name -> path or command
    default_enabled: bool = True
    brief_description: str = ""  # else the first sentence of the description
    user_invocable: bool = True
    disable_model_invocation: bool = False
    runtime: RuntimeSpec | None = None
    category: str = ""
    tags: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The key config and vars use for this skill (`skillKey`, else the name)."""
        return self.skill_key or self.name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
