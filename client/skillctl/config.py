"""The user's client configuration: registries, their tokens, per-skill settings.

Two TOML files in ``paths.config_dir()``:

- ``config.toml``: ``default_registry``, ``skill_dirs``, ``[registries.<name>] url``,
  ``[skills.<key>]`` (``enabled``, ``env``, ``config``, ``apiKey``, ``network``), the tool
  policy of agent sessions, ``[tools]`` (``profile`` minimal|coding|messaging|full, ``allow``,
  ``also_allow``, ``deny``, and ``[tools.groups]`` defining ``group:<name>``) with per-agent
  ``[agents.<name>.tools]`` (the same keys but ``groups``; read by
  :meth:`skillctl.runtime.policy.ToolPolicy.from_config`), ``[runtime] trusted_toolsets`` (the
  ``module:Class`` patterns of the skills' toolsets an agent may load,
  :mod:`skillctl.runtime.toolsets`), ``[runtime] trusted_mcp`` (the skills whose MCP command
  the user trusted, each pinned to a digest; written only by ``skillctl mcp trust``,
  :mod:`skillctl.runtime.mcp_trust`), and any other keys the ``config``
  gates of skills read (dotted, e.g. ``browser.enabled``). Seed 000's settings are plain values
  in ``[skills]`` (a skill's table never is one, so they cannot clash): ``keyword_threshold``
  (routing's lexical threshold, points), ``autoload`` (``route --ask`` loads without asking),
  ``show_matches`` (``route --ask`` names the words that matched), ``docker_enabled`` (false:
  ``skillctl run`` never uses Docker) and ``python_base_image`` (the image ``skillctl run``
  uses); :data:`SEED_SETTINGS` lists them.
- ``credentials.toml``: ``[registries.<name>] token``. Both files are created with mode 0600
  from the first byte (a temp file opened 0600, then one rename), so a token is never readable
  by others, not even for a moment.

Environment overrides: ``SKILLYARD_REGISTRY`` (a base URL) replaces the default registry and
``SKILLYARD_TOKEN`` is the token of that default registry. A registry named explicitly
(``--registry NAME``) always wins over the environment, and ``SKILLYARD_TOKEN`` is never sent
to a registry other than the default one (a CI token must not leak to another registry).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillctl import fileio, paths
from skillctl.errors import SkillctlError, UsageError

CONFIG_FILE = "config.toml"
CREDENTIALS_FILE = "credentials.toml"
ENV_REGISTRY = "SKILLYARD_REGISTRY"
ENV_TOKEN = "SKILLYARD_TOKEN"
ENV_REGISTRY_NAME = "env"  # the name shown for a registry given by SKILLYARD_REGISTRY

# The registry `make run` serves on embedded defaults; real users add theirs with
# `skillctl config add-registry NAME URL` (or SKILLYARD_REGISTRY) and make it the default.
DEFAULT_REGISTRY_NAME = "local"
DEFAULT_REGISTRY_URL = "http://127.0.0.1:8000"

# Seed 000's `skills` settings, each with the type it takes (Config.setting reads them).
SEED_SETTINGS: dict[str, type] = {
    "keyword_threshold": float,
    "autoload": bool,
    "show_matches": bool,
    "docker_enabled": bool,
    "python_base_image": str,
}

# Keys whose values are secrets: masked whenever configuration is shown.
SECRET_KEY_WORDS = ("token", "apikey", "api_key", "secret", "password")


@dataclass
class Registry:
    name: str
    url: str
    token: str | None = None

    def to_dict(self, *, mask: bool = True) -> dict[str, Any]:
        token = mask_secret(self.token) if mask else self.token
        return {"name": self.name, "url": self.url, "token": token}

    def require_token(self) -> str:
        """The token, or the error that tells how to log in."""
        if not self.token:
            raise SkillctlError(
                f"not logged in to {self.name} ({self.url})",
                hint=f"Run `skillctl login --registry {self.name}` (or set {ENV_TOKEN}).",
                code="auth.not_logged_in",
            )
        return self.token


@dataclass
class Config:
    registries: dict[str, Registry] = field(default_factory=dict)
    default_registry: str = DEFAULT_REGISTRY_NAME
    skill_dirs: list[Path] = field(default_factory=list)
    skills: dict[str, dict] = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    def registry(self, name: str | None = None) -> Registry:
        """The registry to talk to: ``name``, else ``SKILLYARD_REGISTRY``, else the default."""
        if name is None and os.environ.get(ENV_REGISTRY):
            url = normalise_url(os.environ[ENV_REGISTRY])
            known = self.registry_for_url(url)
            token = os.environ.get(ENV_TOKEN) or known.token
            return Registry(name=known.name, url=url, token=token)
        chosen = name or self.default_registry
        found = self.registries.get(chosen)
        if found is None:
            configured = ", ".join(sorted(self.registries)) or "none"
            raise UsageError(
                f"unknown registry {chosen!r} (configured: {configured})",
                hint="Add it with `skillctl config add-registry NAME URL`.",
                code="config.unknown_registry",
            )
        token = found.token
        if chosen == self.default_registry and os.environ.get(ENV_TOKEN):
            token = os.environ[ENV_TOKEN]
        return Registry(name=found.name, url=found.url, token=token)

    def registry_for_url(self, url: str) -> Registry:
        """The configured registry at ``url`` (with its token), else an anonymous one.

        Lock files record registry URLs; this maps them back to credentials.
        """
        url = normalise_url(url)
        for reg in self.registries.values():
            if normalise_url(reg.url) == url:
                return Registry(name=reg.name, url=url, token=reg.token)
        env_url = os.environ.get(ENV_REGISTRY)
        if env_url and normalise_url(env_url) == url:
            return Registry(name=ENV_REGISTRY_NAME, url=url, token=os.environ.get(ENV_TOKEN))
        return Registry(name=url, url=url, token=None)

    def skill_settings(self, key: str) -> dict:
        """``[skills.<key>]`` of the config (empty when absent)."""
        found = self.skills.get(key)
        return found if isinstance(found, dict) else {}

    def get(self, dotted: str, default: Any = None) -> Any:
        """A value of ``config.toml`` by dotted key (``browser.enabled``)."""
        return get_dotted(self.values, dotted, default)

    def setting(self, key: str, default: Any = None) -> Any:
        """One of seed 000's ``[skills]`` settings (:data:`SEED_SETTINGS`), or ``default``
        when unset; a value of the wrong type is ``config.invalid``, never guessed at."""
        kind = SEED_SETTINGS[key]
        value = (self.values.get("skills") or {}).get(key)
        if value is None:
            return default
        if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, kind) and not (isinstance(value, str) and not value.strip()):
            return value
        raise SkillctlError(
            f"skills.{key} in config.toml must be a {kind.__name__} (got {value!r})",
            hint=f"Run `skillctl config set skills.{key} VALUE`.",
            code="config.invalid",
        )


def normalise_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if url.endswith("/api/v1"):
        url = url[: -len("/api/v1")]
    return url


def mask_secret(value: Any) -> Any:
    """What is shown instead of a secret: its kind at most, never any of its characters."""
    if not value:
        return value
    return "sky_****" if str(value).startswith("sky_") else "****"


def is_secret_key(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in SECRET_KEY_WORDS)


def masked(values: Any, *, under_env: bool = False) -> Any:
    """A copy of a config table with secrets (and every value under an ``env`` table) masked."""
    if isinstance(values, dict):
        return {
            k: (
                mask_secret(v)
                if (is_secret_key(k) or under_env) and not isinstance(v, dict)
                else masked(v, under_env=under_env or k == "env")
            )
            for k, v in values.items()
        }
    if isinstance(values, list):
        return [masked(v, under_env=under_env) for v in values]
    return values


# --- files ---------------------------------------------------------------------------------


def config_path() -> Path:
    return paths.config_dir() / CONFIG_FILE


def credentials_path() -> Path:
    return paths.config_dir() / CREDENTIALS_FILE


_INVALID_HINT = "Fix or delete the file; `skillctl config` rewrites it."


def read_toml(path: Path) -> dict:
    return fileio.read_toml(path, hint=_INVALID_HINT, code="config.invalid")


def edit_toml(path: Path):
    """The file as an editable document: what is not changed (comments included) is kept."""
    return fileio.read_toml_document(path, hint=_INVALID_HINT, code="config.invalid")


def write_toml(path: Path, data: dict) -> None:
    """Write atomically, mode 0600 from the start (the credentials file holds tokens)."""
    fileio.atomic_write(path, fileio.dump_toml(data), mode=0o600)


def load_config() -> Config:
    values = read_toml(config_path())
    credentials = read_toml(credentials_path()).get("registries", {})
    registries = {
        DEFAULT_REGISTRY_NAME: Registry(DEFAULT_REGISTRY_NAME, DEFAULT_REGISTRY_URL),
    }
    for name, table in (values.get("registries") or {}).items():
        if isinstance(table, dict) and table.get("url"):
            registries[name] = Registry(name, normalise_url(str(table["url"])))
    for name, reg in registries.items():
        token = (credentials.get(name) or {}).get("token")
        reg.token = str(token) if token else None
    return Config(
        registries=registries,
        default_registry=str(values.get("default_registry") or DEFAULT_REGISTRY_NAME),
        skill_dirs=[Path(str(p)).expanduser() for p in values.get("skill_dirs") or []],
        skills={k: v for k, v in (values.get("skills") or {}).items() if isinstance(v, dict)},
        values=values,
    )


def save_token(registry_name: str, token: str) -> None:
    data = read_toml(credentials_path())
    data.setdefault("registries", {}).setdefault(registry_name, {})["token"] = token
    write_toml(credentials_path(), data)


def delete_token(registry_name: str) -> bool:
    """Forget a registry's token; False when there was none."""
    data = read_toml(credentials_path())
    table = data.get("registries", {}).get(registry_name)
    if not table or "token" not in table:
        return False
    del table["token"]
    if not table:
        del data["registries"][registry_name]
    write_toml(credentials_path(), data)
    return True


# --- `skillctl config get/set/add-registry` -----------------------------------------------


def get_dotted(values: dict, dotted: str, default: Any = None) -> Any:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def parse_value(text: str) -> Any:
    """A TOML literal when it is one (``true``, ``3``, ``["a"]``), else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_value(dotted: str, text: str) -> Any:
    """Set a dotted key in ``config.toml``; returns the value stored."""
    parts = dotted.split(".")
    if not all(parts):
        raise UsageError(
            f"invalid key {dotted!r}", hint="Use a dotted key such as skills.NAME.enabled.", code="config.invalid_key"
        )
    if parts[0] == "registries" and parts[-1] == "token":
        raise UsageError(
            "tokens are not stored in config.toml",
            hint="Use `skillctl login --registry NAME` (the token goes to credentials.toml, 0600).",
            code="config.token_key",
        )
    value = parse_value(text)
    if parts[0] == "registries" and parts[-1] == "url":
        value = normalise_url(str(value))
    if dotted == "default_registry" and value not in load_config().registries:
        raise UsageError(
            f"unknown registry {value!r}",
            hint="Add it first with `skillctl config add-registry NAME URL`.",
            code="config.unknown_registry",
        )
    data = edit_toml(config_path())
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise UsageError(
                f"{part!r} in {dotted!r} holds a value, not a table",
                hint=f"Run `skillctl config get {part}` to see it.",
                code="config.not_a_table",
            )
        node = child
    node[parts[-1]] = value
    write_toml(config_path(), data)
    return value


def skill_enabled_set(key: str, enabled: bool, config: Config | None = None) -> None:
    """Write ``[skills.<key>] enabled`` to config.toml, the setting ``skillctl check`` and routing
    read (``skillctl config set skills.KEY.enabled false`` writes the same), and into ``config``."""
    set_value(f"skills.{key}.enabled", "true" if enabled else "false")
    if config is not None:
        table = config.skills.setdefault(key, {})
        table["enabled"] = enabled
        config.values.setdefault("skills", {})[key] = table


def add_registry(name: str, url: str, *, default: bool = False) -> Registry:
    if not name or "." in name:
        raise UsageError(
            f"invalid registry name {name!r}",
            hint="Use a short name such as `work`.",
            code="config.invalid_registry_name",
        )
    if not url.startswith(("http://", "https://")):
        raise UsageError(
            f"registry URL must start with http:// or https:// (got {url!r})",
            hint="Give the registry's base URL, e.g. https://skills.example.com",
            code="config.invalid_registry_url",
        )
    from skillctl.transport import require_safe_url

    require_safe_url(normalise_url(url), what="the registry URL")  # tokens go there: never plain http
    data = edit_toml(config_path())
    data.setdefault("registries", {})[name] = {"url": normalise_url(url)}
    if default:
        data["default_registry"] = name
    write_toml(config_path(), data)
    return Registry(name, normalise_url(url))


def iter_flat(values: dict, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, leaf value) pairs, for a plain listing of the configuration."""
    for key, value in values.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from iter_flat(value, dotted + ".")
        else:
            yield dotted, value
