"""Typed reads of loosely typed YAML values: every mismatch becomes a finding, never an exception.

A :class:`Reader` carries the findings list and knows where each top-level key is, so a bad
nested value (``requires.bins``) is reported at the line of its top-level key.
"""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from skillctl.format.findings import Finding, error, warning

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0", ""}
_MISSING = object()


@dataclass
class Reader:
    location: str = "SKILL.md"
    key_lines: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def where(self, path: str) -> str:
        top = path.split(".", 1)[0]
        if top in self.key_lines:
            return f"{self.location}:{self.key_lines[top]}"
        if "metadata" in self.key_lines and path.startswith("metadata"):
            return f"{self.location}:{self.key_lines['metadata']}"
        return self.location

    def type_error(self, path: str, expected: str, value: Any, *, soft: bool = False) -> None:
        make = warning if soft else error
        got = type(value).__name__
        self.findings.append(make("field.type", f"{path} must be {expected}, not {got}", self.where(path)))

    def value_error(self, path: str, message: str) -> None:
        self.findings.append(warning("field.value", f"{path}: {message}", self.where(path)))

    # --- scalars --------------------------------------------------------------------------
    def text(self, value: Any, path: str, *, numbers: bool = True, soft: bool = False) -> str:
        """A string; numbers become their text when ``numbers`` (e.g. `version: 1.0`)."""
        if value is None:
            return ""
        if isinstance(value, str):
            return value.strip()
        if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        self.type_error(path, "a string", value, soft=soft)
        return ""

    def flag(self, value: Any, path: str, default: bool, *, soft: bool = False) -> bool:
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        self.type_error(path, "true or false", value, soft=soft)
        return default

    def number(self, value: Any, path: str, *, integer: bool = False, soft: bool = False):
        if value is None:
            return None
        if isinstance(value, str):
            try:
                value = float(value.strip().rstrip("s"))  # "30s" is common for timeouts
            except ValueError:
                pass
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return int(value) if integer else float(value)
        self.type_error(path, "a non-negative number", value, soft=soft)
        return None

    # --- collections ------------------------------------------------------------------------
    def strings(self, value: Any, path: str, *, soft: bool = False, split: str = ",") -> list[str]:
        """A list of strings; a single string is split on ``split``; a mapping gives its keys."""
        if value is None:
            return []
        if isinstance(value, str):
            return [p.strip() for p in value.split(split) if p.strip()] if split else [value.strip()]
        if isinstance(value, dict):
            value = list(value)
        if isinstance(value, (list, tuple)):
            items = []
            for item in value:
                if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                    if str(item).strip():
                        items.append(str(item).strip())
                elif item is not None:
                    self.type_error(path, "a list of strings", item, soft=soft)
            return items
        self.type_error(path, "a list of strings", value, soft=soft)
        return []

    def mapping(self, value: Any, path: str, *, soft: bool = False) -> dict:
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.type_error(path, "a mapping", value, soft=soft)
        return {}


def dict_at(mapping: dict, key: str) -> dict:
    """``mapping[key]`` when it is a mapping, else ``{}`` (YAML and JSON from outside)."""
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


def first(sources: list[dict], *keys: str) -> tuple[Any, str]:
    """The first value present for any of ``keys`` in ``sources`` (in order), and its key."""
    for source in sources:
        for key in keys:
            value = source.get(key, _MISSING)
            if value is not _MISSING and value is not None:
                return value, key
    return None, keys[0]


def jsonable(value: Any) -> Any:
    """YAML can produce bytes, sets and dates; the manifest must serialise as JSON."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
