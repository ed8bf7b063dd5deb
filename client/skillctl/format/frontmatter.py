"""Split a SKILL.md into frontmatter and body, and load the frontmatter YAML safely.

Policy (DESIGN section 3): ``---`` on the first line, a closing ``---`` line, CRLF accepted,
YAML through a safe loader (libyaml's C parser when present, for speed). Flow style and
OpenClaw's single-line JSON ``metadata`` are accepted with warnings; a lenient retry quotes
values holding an unquoted ``: `` before giving up. Nothing here raises for bad input: every
problem is a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from skillctl.format.findings import Finding, error, warning

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# An alias bomb ("billion laughs") is a few lines of YAML that expand to millions of nodes once
# anything walks the result. Real frontmatter has a few hundred nodes; 10,000 is generous.
MAX_EXPANDED_NODES = 10_000
# The same bomb with one long string: 300 aliases to 100 KB stored a 30 MB manifest that every
# version read served again. Real frontmatter is under 2 KB (corpus maximum); 64 KiB is plenty.
MAX_EXPANDED_CHARS = 64 * 1024
# Frontmatter rarely uses aliases at all (one corpus file of 3,987 does); each use multiplies.
MAX_ALIASES = 100
# Deeper nesting has no use in frontmatter and would exhaust the recursion of any consumer.
MAX_NESTING = 64

# The gating blocks of OpenClaw and its earlier names, which live under `metadata`.
JSON_INLINE_KEYS = ("metadata",)


@dataclass
class Frontmatter:
    """The loaded frontmatter and where each top-level key is (1-based line in SKILL.md)."""

    data: dict[str, Any] | None = None
    body: str = ""
    key_lines: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    raw: str = ""  # the frontmatter text, without the --- lines
    first_line: int = 2  # line number in SKILL.md of the first frontmatter line


class TooComplex(Exception):
    """The frontmatter would expand past MAX_EXPANDED_NODES or nest past MAX_NESTING."""


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader that records duplicate keys instead of silently keeping the last one."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, int]] = []

    def construct_mapping(self, node, deep=False):  # noqa: ANN001 (PyYAML's signature)
        seen: set = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
                if key in seen and key != "<<":
                    self.duplicates.append((key, key_node.start_mark.line))
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


# Two YAML 1.1 resolvers surprise authors, so we resolve like YAML 1.2's core schema instead:
# timestamps turn `date: 2024-01-01` into datetime objects nobody wants in a manifest, and
# yes/no/on/off booleans turn `name: off` or `os: [no]` into False.
_BOOL, _TIMESTAMP = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp"
_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in (_BOOL, _TIMESTAMP)]
    for k, v in _BaseLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def split(text: str, location: str) -> Frontmatter:
    """Find the frontmatter block; ``text`` has had its BOM removed already."""
    result = Frontmatter()
    first, sep, rest = text.partition("\n")
    if first.rstrip("\r").rstrip() != "---":
        result.findings.append(error("frontmatter.missing", "SKILL.md must start with a '---' line", f"{location}:1"))
        result.body = text
        return result
    lines = rest.split("\n")
    for index, line in enumerate(lines):
        if line.rstrip("\r").rstrip() == "---":
            result.raw = "\n".join(x.rstrip("\r") for x in lines[:index])
            result.body = "\n".join(lines[index + 1 :])
            return result
    result.findings.append(error("frontmatter.unclosed", "the frontmatter has no closing '---' line", f"{location}:1"))
    return result


def load(result: Frontmatter, location: str) -> None:
    """Load ``result.raw`` into ``result.data`` (or add the findings saying why not)."""
    loaded = _load_yaml(result.raw)
    if isinstance(loaded, yaml.YAMLError):
        retried = _load_yaml(_quote_colon_values(result.raw))
        if isinstance(retried, yaml.YAMLError):
            result.findings.append(_yaml_error(loaded, location, result.first_line))
            return
        if not isinstance(retried, TooComplex):
            result.findings.append(
                warning(
                    "frontmatter.lenient_parse",
                    "values containing ': ' had to be quoted to parse; quote them in the file",
                    f"{location}:{result.first_line}",
                )
            )
        loaded = retried
    if isinstance(loaded, TooComplex):
        result.findings.append(error("frontmatter.too_complex", str(loaded), f"{location}:{result.first_line}"))
        return
    data, node, loader = loaded
    if data is None and not result.raw.strip():
        data = {}
    if not isinstance(data, dict):
        result.findings.append(
            error(
                "frontmatter.not_mapping",
                f"the frontmatter is a {type(data).__name__}, not a mapping of keys to values",
                f"{location}:{result.first_line}",
            )
        )
        return
    result.data = data
    _record_keys(result, node, location)
    for key, line in loader.duplicates:
        result.findings.append(
            warning(
                "frontmatter.duplicate_key",
                f"key {key!r} appears more than once; the last one wins",
                f"{location}:{line + result.first_line}",
            )
        )


def _load_yaml(raw: str):
    """(data, root node, loader), a YAMLError, or TooComplex when the YAML is a bomb."""
    loader = _Loader(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None, loader
        _check_size(node)
        return loader.construct_document(node), node, loader
    except yaml.YAMLError as exc:
        return exc
    except TooComplex as exc:
        return exc
    except RecursionError:
        return TooComplex("the frontmatter nests too deeply")
    except (ValueError, TypeError) as exc:  # e.g. unhashable keys (`? [a]: b`)
        return yaml.YAMLError(str(exc))
    finally:
        loader.dispose()


def _check_size(root) -> None:  # noqa: ANN001
    """Measure the frontmatter as a consumer would see it (aliases expanded) without expanding
    it: values, characters of text, alias uses, depth; and refuse an alias inside itself."""
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()  # the nodes on the path from the root: an alias to one loops
    aliases = 0

    def size(node, depth: int) -> tuple[int, int]:  # noqa: ANN001
        nonlocal aliases
        if depth > MAX_NESTING:
            raise TooComplex(f"the frontmatter nests deeper than {MAX_NESTING} levels")
        if id(node) in open_nodes:
            raise TooComplex("the frontmatter holds a YAML alias to itself (a recursive structure)")
        known = sizes.get(id(node))
        if known is not None:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise TooComplex(f"the frontmatter uses YAML aliases more than {MAX_ALIASES} times")
            return known
        open_nodes.add(id(node))
        count, chars = 1, len(node.value) if isinstance(node, yaml.ScalarNode) else 0
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        for child in children:
            child_count, child_chars = size(child, depth + 1)
            count, chars = count + child_count, chars + child_chars
        open_nodes.discard(id(node))
        if count > MAX_EXPANDED_NODES:
            raise TooComplex(f"the frontmatter expands to more than {MAX_EXPANDED_NODES} values (YAML aliases?)")
        if chars > MAX_EXPANDED_CHARS:
            raise TooComplex(
                f"the frontmatter expands to more than {MAX_EXPANDED_CHARS // 1024} KiB of text"
                " (YAML aliases repeat it?)"
            )
        sizes[id(node)] = (count, chars)
        return count, chars

    size(root, 0)


def _record_keys(result: Frontmatter, root, location: str) -> None:  # noqa: ANN001
    """Remember each top-level key's line; warn about flow style and inline JSON metadata."""
    if not isinstance(root, yaml.MappingNode):
        return
    flow_line = 1 if root.flow_style else None
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        line = key_node.start_mark.line + result.first_line
        result.key_lines.setdefault(key_node.value, line)
        is_flow = getattr(value_node, "flow_style", False) and isinstance(
            value_node, (yaml.MappingNode, yaml.SequenceNode)
        )
        if key_node.value in JSON_INLINE_KEYS and is_flow and isinstance(value_node, yaml.MappingNode):
            result.findings.append(
                warning(
                    "metadata.json_inline",
                    "metadata is single-line JSON; `skillctl migrate` rewrites it as block YAML",
                    f"{location}:{line}",
                )
            )
        elif flow_line is None and (is_flow or _has_flow(value_node)):
            flow_line = line
    if flow_line is not None:
        result.findings.append(
            warning(
                "frontmatter.flow_style",
                "flow-style YAML ({...} or [...]) is rejected by some clients; use block style",
                f"{location}:{flow_line}",
            )
        )


def _has_flow(node) -> bool:  # noqa: ANN001
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.SequenceNode):
            if current.flow_style:
                return True
            stack.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            if current.flow_style:
                return True
            for k, v in current.value:
                stack.extend((k, v))
    return False


# `key: value with: a colon` -- a plain scalar cannot hold ': '; quote the value and retry.
_COLON_VALUE = re.compile(r"^(\s*(?:-\s+)?[^\s#:'\"\[\]{}][^:#]*?:[ \t]+)([^'\"\[{|>&*!%@`#].*: .*?)\s*$")


def _quote_colon_values(raw: str) -> str:
    lines = []
    for line in raw.split("\n"):
        match = _COLON_VALUE.match(line)
        if match:
            value = match.group(2).replace("'", "''")
            line = f"{match.group(1)}'{value}'"
        lines.append(line)
    return "\n".join(lines)


def _yaml_error(exc: yaml.YAMLError, location: str, first_line: int) -> Finding:
    mark = getattr(exc, "problem_mark", None)
    line = (mark.line + first_line) if mark is not None else first_line
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["invalid"])[0]
    return error("frontmatter.invalid_yaml", f"invalid YAML: {problem}", f"{location}:{line}")
