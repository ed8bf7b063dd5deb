"""Python data flow across a skill's own modules: which strings a file builds, and what its
dynamic lookups (``getattr(os, X)``, ``__import__(X)``, ``__builtins__[X]``) and ``exec`` calls
end up naming or running.

Strings are folded from literals only: concatenation, f-strings of constants, ``chr()``, joins,
reversal, and the decoders (base64, hex, zlib/gzip, rot13, ``.decode()``), through module-level
names and zero-argument functions, including those imported from the skill's other ``.py``
files (a payload split across files). Nothing is executed; folding is bounded in depth and size.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from skillctl.format.scanner.decode import MAX_DECODED
from skillctl.format.scanner.decode import MAX_PAYLOADS as MAX_BUILT

MAX_FOLD_DEPTH = 24  # a name built from more nested pieces than this is not worth following
MAX_SOURCE = 1024 * 1024  # a bigger .py file is generated or vendored: the line rules still read it
MAX_FLOWS = 50  # per module: findings are capped at 20 per rule; the rest would be the same story
MAX_FOLDS = 100_000  # per module: a few per expression of a real script; a crafted tree stops here

DANGEROUS_MODULES = frozenset("os subprocess pty socket ctypes builtins __builtin__ marshal pickle importlib".split())
DANGEROUS_ATTRS = frozenset(
    "system popen exec eval compile __import__ import_module execv execve execvp execl execlp spawnv spawnve "
    "spawnl Popen check_output check_call getoutput getstatusoutput loads".split()
)
EXEC_BUILTINS = frozenset(("exec", "eval", "compile", "__import__"))
BUILTIN_HOLDERS = frozenset(("__builtins__", "builtins", "__builtin__"))
DECODERS = frozenset(
    "b64decode standard_b64decode urlsafe_b64decode decodebytes a2b_base64 b32decode b16decode b85decode "
    "a85decode fromhex unhexlify a2b_hex decompress".split()
)
SHELL_CALLS = frozenset("system popen Popen run call check_output check_call getoutput getstatusoutput".split())


@dataclass(frozen=True)
class Value:
    data: str | bytes
    how: str  # "" for a plain literal; else how it was built ("concatenation", "base64", ...)


@dataclass(frozen=True)
class Flow:
    """What one call does: a finding the scanner reports (rule id decided by the caller)."""

    line: int
    kind: str  # dynamic_obfuscated | dynamic_plain | exec_decoded
    detail: str


@dataclass
class ModuleFlow:
    flows: list[Flow] = field(default_factory=list)
    built: list[tuple[int, str, str]] = field(default_factory=list)  # (line, how, text) of built strings


def analyse(sources: dict[str, str]) -> dict[str, ModuleFlow]:
    """``sources``: a skill's ``.py`` files by relative path; the flows of each."""
    trees = {rel: tree for rel, text in sources.items() if (tree := _parse(text)) is not None}
    names = {name: rel for rel in trees for name in _module_names(rel)}
    envs: dict[str, dict[str, Value]] = {}
    return {rel: _Module(rel, tree, names, trees, envs).flow() for rel, tree in trees.items()}


def _parse(text: str) -> ast.Module | None:
    if len(text) > MAX_SOURCE:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _module_names(rel: str) -> Iterator[str]:
    parts = PurePosixPath(rel).with_suffix("").parts
    for i in range(len(parts)):  # scripts/lib/helpers.py: helpers, lib.helpers, scripts.lib.helpers
        yield ".".join(parts[len(parts) - 1 - i :])


class _Module:
    def __init__(self, rel: str, tree: ast.Module, names: dict, trees: dict, envs: dict) -> None:
        self.rel, self.tree, self.names, self.trees, self.envs = rel, tree, names, trees, envs
        self.modules: dict[str, str] = {}  # local alias -> a sibling file (import helpers as h)
        self.imported: dict[str, str] = {}  # local alias -> a library module (import os as o)
        self.runners: dict[str, str] = {}  # local alias -> exec, eval or compile (run = exec)
        self.folded: dict[int, Value | None] = {}  # by node id: each expression is folded once
        self.folds_left = MAX_FOLDS

    def env(self) -> dict[str, Value]:
        """Module-level (and function-level) constants, imports from sibling files resolved."""
        if self.rel in self.envs:
            return self.envs[self.rel]
        env: dict[str, Value] = {}
        self.envs[self.rel] = env  # before filling: an import circle sees a partial env, not a loop
        for node in ast.walk(self.tree):
            self._bind(node, env)
        return env

    def _bind(self, node: ast.AST, env: dict[str, Value]) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._import(alias.name, alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            sibling = self.names.get(node.module)
            other = _Module(sibling, self.trees[sibling], self.names, self.trees, self.envs).env() if sibling else {}
            for alias in node.names:
                for key in (alias.name, alias.name + "()"):
                    if key in other:
                        found = other[key]
                        env[(alias.asname or alias.name) + key[len(alias.name) :]] = Value(
                            found.data, found.how and f"{found.how}, imported from {sibling}"
                        )
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets: list[ast.expr] = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
            self._assign(targets, node.value, env)
        elif isinstance(node, ast.FunctionDef) and not node.args.args and node.body:
            last = node.body[-1]
            if isinstance(last, ast.Return) and last.value is not None:
                if (value := self.fold(last.value, env)) is not None:
                    env[node.name + "()"] = value

    def _import(self, name: str, alias: str) -> None:
        if name in self.names:
            self.modules[alias] = self.names[name]
        else:
            self.imported[alias] = name

    def _assign(self, targets: list[ast.expr], value_node: ast.expr, env: dict[str, Value]) -> None:
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value_node, ast.Name) and value_node.id in ("exec", "eval", "compile", *self.runners):
                self.runners[target.id] = self.runners.get(value_node.id, value_node.id)
                continue
            if isinstance(value_node, ast.Call) and _name(value_node.func) in ("__import__", "import_module"):
                module = self.fold(value_node.args[0], env) if value_node.args else None
                if module is not None and isinstance(module.data, str):
                    self.imported[target.id] = module.data
                continue
            if (value := self.fold(value_node, env)) is not None:
                env[target.id] = value

    def fold(self, node: ast.AST, env: dict[str, Value], depth: int = 0) -> Value | None:
        """The string (or bytes) ``node`` always evaluates to, if it is built from literals."""
        key = id(node)
        if key not in self.folded:
            if depth > MAX_FOLD_DEPTH or self.folds_left <= 0:
                return None
            self.folds_left -= 1
            self.folded[key] = self._fold(node, env, depth)
        return self.folded[key]

    def _fold(self, node: ast.AST, env: dict[str, Value], depth: int) -> Value | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return Value(node.value[:MAX_DECODED], "")
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            sibling = self.modules[node.value.id]
            value = _Module(sibling, self.trees[sibling], self.names, self.trees, self.envs).env().get(node.attr)
            return Value(value.data, value.how and f"{value.how}, from {sibling}") if value else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._concat([node.left, node.right], env, depth, "concatenation")
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
            return self._concat(parts, env, depth, "f-string")
        if isinstance(node, ast.Subscript) and _is_reversal(node.slice):
            value = self.fold(node.value, env, depth + 1)
            return Value(value.data[::-1], "reversed") if value else None
        if isinstance(node, ast.Call):
            return self._fold_call(node, env, depth + 1)
        return None

    def _concat(self, parts: list[ast.expr], env: dict[str, Value], depth: int, how: str) -> Value | None:
        values = [v for p in parts if (v := self.fold(p, env, depth + 1)) is not None]
        if len(values) != len(parts) or not values:
            return None
        hows = [v.how for v in values if v.how]
        chunks = [v.data for v in values]
        if all(isinstance(c, str) for c in chunks):
            data: str | bytes = "".join(c for c in chunks if isinstance(c, str))
        elif all(isinstance(c, bytes) for c in chunks):
            data = b"".join(c for c in chunks if isinstance(c, bytes))
        else:
            return None
        return Value(data[:MAX_DECODED], hows[0] if hows else how)

    def _fold_call(self, node: ast.Call, env: dict[str, Value], depth: int) -> Value | None:
        func, args = node.func, node.args
        name = _name(func)
        if name == "chr" and args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, int):
            return Value(chr(args[0].value), "chr") if 0 <= args[0].value < 0x110000 else None
        if name in ("bytes", "bytearray") and args and isinstance(args[0], ast.List | ast.Tuple):
            codes = [e.value for e in args[0].elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
            ok = len(codes) == len(args[0].elts) and all(0 <= c < 256 for c in codes)
            return Value(bytes(codes), "chr") if ok else None
        if not args and isinstance(func, ast.Name):
            return env.get(func.id + "()")
        if isinstance(func, ast.Attribute):
            if func.attr == "join" and args and isinstance(args[0], ast.List | ast.Tuple):
                sep = self.fold(func.value, env, depth)
                if sep is not None:
                    return self._concat(_interleave(args[0].elts, func.value), env, depth, "join")
            if func.attr in ("decode", "encode"):
                return self._recode(func, args, env, depth)
        if name in DECODERS or name == "decode":
            payload = self.fold(args[0], env, depth) if args else None
            codec = self.fold(args[1], env, depth) if len(args) > 1 else None
            return _decode(name, payload, codec.data if codec else None) if payload else None
        return None

    def _recode(self, func: ast.Attribute, args: list[ast.expr], env: dict, depth: int) -> Value | None:
        value = self.fold(func.value, env, depth)
        codec = self.fold(args[0], env, depth) if args else None
        if value is None:
            return None
        if func.attr == "encode":
            return Value(value.data.encode("utf-8", "replace"), value.how) if isinstance(value.data, str) else None
        if codec is not None and str(codec.data).replace("-", "_").lower() in ("rot13", "rot_13", "hex", "base64"):
            return _decode("decode", value, codec.data)
        data = value.data.decode("utf-8", "replace") if isinstance(value.data, bytes) else value.data
        return Value(data, value.how)

    def flow(self) -> ModuleFlow:
        env, result = self.env(), ModuleFlow()
        for node in ast.walk(self.tree):
            if len(result.flows) >= MAX_FLOWS:
                break
            if isinstance(node, ast.Call):
                result.flows += self._call(node, env)
            elif isinstance(node, ast.Subscript) and _is_builtins_table(node.value):
                result.flows += self._lookup(node, self.fold(node.slice, env), "a built-ins lookup")
        for node in ast.walk(self.tree):
            if isinstance(node, ast.expr) and not isinstance(node, ast.Constant | ast.Name):
                value = self.fold(node, env) if isinstance(node, ast.BinOp | ast.Call | ast.JoinedStr) else None
                if value is not None and value.how and len(result.built) < MAX_BUILT:
                    result.built.append((node.lineno, value.how, _text(value.data)))
        return result

    def _call(self, node: ast.Call, env: dict[str, Value]) -> list[Flow]:
        name, args = _name(node.func), node.args
        if name == "getattr" and len(args) >= 2:
            holder = _name(args[0])
            where = "a built-ins lookup" if holder in BUILTIN_HOLDERS else f"getattr({holder or '...'}, ...)"
            return self._lookup(node, self.fold(args[1], env), where, self.imported.get(holder, holder))
        if name in ("__import__", "import_module") and args:
            module = self.fold(args[0], env)
            if module is not None and module.how and module.data in DANGEROUS_MODULES:
                return [Flow(node.lineno, "dynamic_obfuscated", f"imports {module.data!r} ({module.how})")]
        sink = self._sink(node.func, env)
        if sink and args:
            decoded = self.fold(args[0], env)
            runs_code = sink in ("exec", "eval", "compile")
            if (decoded is not None and (_is_encoded(decoded.how) or runs_code and decoded.how)) or (
                _has_decoder_call(args[0])
            ):
                how = decoded.how if decoded is not None else "a decoder"
                return [Flow(node.lineno, "exec_decoded", f"{sink} runs text from {how}")]
        return []

    def _sink(self, func: ast.expr, env: dict[str, Value]) -> str:
        if isinstance(func, ast.Name) and func.id in ("exec", "eval", "compile", *self.runners):
            return self.runners.get(func.id, func.id)
        if isinstance(func, ast.Attribute) and func.attr == "loads":  # unpickling runs code too
            base = _name(func.value)
            if self.imported.get(base, base) in ("pickle", "marshal", "dill", "cloudpickle"):
                return f"{base}.loads"
        if isinstance(func, ast.Attribute) and func.attr in SHELL_CALLS:
            base = _name(func.value)
            if self.imported.get(base, base) in ("os", "subprocess", "commands"):
                return f"{base}.{func.attr}"
        if isinstance(func, ast.Call) and _name(func.func) == "getattr" and len(func.args) >= 2:
            target = self.fold(func.args[1], env)
            if target is not None and target.data in DANGEROUS_ATTRS:
                return str(target.data)
        if isinstance(func, ast.Subscript) and _is_builtins_table(func.value):
            target = self.fold(func.slice, env)
            if target is not None and target.data in EXEC_BUILTINS:
                return str(target.data)
        return ""

    def _lookup(self, node: ast.AST, target: Value | None, where: str, holder: str = "") -> list[Flow]:
        if target is None or not isinstance(target.data, str):
            return []
        line = getattr(node, "lineno", 0)
        if target.how and (target.data in DANGEROUS_ATTRS or target.data in DANGEROUS_MODULES):
            return [Flow(line, "dynamic_obfuscated", f"{where} names {target.data!r} ({target.how})")]
        risky_holder = holder in DANGEROUS_MODULES or holder in BUILTIN_HOLDERS or where == "a built-ins lookup"
        # A plain name weighs by its holder: getattr(model, "eval") is PyTorch, getattr(os, "system") is not.
        if risky_holder and (target.data in EXEC_BUILTINS or target.data in DANGEROUS_ATTRS):
            return [Flow(line, "dynamic_plain", f"{where} names {target.data!r}")]
        return []


def _is_encoded(how: str) -> bool:
    """Decoded rather than merely assembled: nobody base64-encodes a command they mean to show."""
    return any(step in how for step in ("base64", "hex", "zlib", "rot13", "reversed", "chr", "b32", "b85", "a85"))


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _is_reversal(node: ast.AST) -> bool:
    step = node.step if isinstance(node, ast.Slice) else None
    return (isinstance(step, ast.UnaryOp) and isinstance(step.operand, ast.Constant) and step.operand.value == 1) or (
        isinstance(step, ast.Constant) and step.value == -1
    )


def _is_builtins_table(node: ast.AST) -> bool:
    """``__builtins__``, ``__builtins__.__dict__``, ``vars(builtins)``, ``globals()``."""
    if isinstance(node, ast.Name):
        return node.id in BUILTIN_HOLDERS
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" and _is_builtins_table(node.value)
    if isinstance(node, ast.Call):
        return _name(node.func) in ("globals", "locals") or (
            _name(node.func) == "vars" and bool(node.args) and _is_builtins_table(node.args[0])
        )
    return False


def _has_decoder_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _name(n.func) in DECODERS for n in ast.walk(node))


def _interleave(parts: list[ast.expr], sep: ast.expr) -> list[ast.expr]:
    joined: list[ast.expr] = []
    for i, part in enumerate(parts):
        joined += [sep, part] if i else [part]
    return joined


def _decode(name: str, value: Value, codec: object) -> Value | None:
    decoded = _decode_step(name, value, codec)
    if decoded is None:
        return None
    return Value(decoded.data, f"{decoded.how} of {value.how}" if value.how else decoded.how)


def _decode_step(name: str, value: Value, codec: object) -> Value | None:
    data = value.data.encode("latin-1", "replace") if isinstance(value.data, str) else value.data
    kind = str(codec or name).replace("-", "_").lower()
    try:
        if "rot" in kind and isinstance(value.data, str):
            return Value(codecs.decode(value.data, "rot13"), "rot13")
        if kind in ("fromhex", "unhexlify", "a2b_hex", "b16decode", "hex"):
            return Value(binascii.unhexlify(data.replace(b" ", b"")), "hex")
        if kind == "decompress" or kind == "zlib":
            return Value(zlib.decompressobj(zlib.MAX_WBITS | 32).decompress(data, MAX_DECODED), "zlib")
        if kind in ("b32decode", "b85decode", "a85decode"):
            return Value(getattr(base64, kind)(data), kind[:3])
        if kind in ("b64decode", "standard_b64decode", "urlsafe_b64decode", "decodebytes", "a2b_base64", "base64"):
            return Value(base64.b64decode(data.replace(b"-", b"+").replace(b"_", b"/")), "base64")
    except (binascii.Error, ValueError, zlib.error, TypeError):
        return None
    return None


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data
