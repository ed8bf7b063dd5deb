"""The on-disk routing index: one compact JSON file per set of skill roots, under state_dir().

Each entry keeps what routing and the catalog need without re-reading the skill: where it is,
the SKILL.md fingerprint (mtime, size), its version and content digest (sha256 of SKILL.md: what a
session snapshot pins), the routing manifest, a token estimate, whether the model may invoke it. With the semantic extra, the centroid vector and the vectors of the manifest's
synthetic queries (base64 float16, ~20 KB for a skill with 20 queries) and its body passages (their
text, and WordLlama vectors) go to a sidecar file
(``index-*.vectors.json``) that only semantic routing reads, so lexical-only routing does not
parse them. Loading is one ``json.loads`` (two with semantic); only new, changed or removed
skills are parsed again (a folder added or deleted changes the located set; an edited SKILL.md
its fingerprint), and ``--reindex`` rebuilds all.

A file's mtime is only as fine as the file system's clock tick, so an edit that keeps the size,
made within the same tick as the indexed version, keeps the fingerprint too (git's "racily
clean" entries). A SKILL.md modified within :data:`RACY_WINDOW_NS` of the index write is
therefore compared by digest as well, until a later write of the index moves past it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillctl import paths
from skillctl.discovery import SKILL_FILE, Collision, load_installed, resolve_collisions
from skillctl.gating import Gates
from skillctl.routing import manifests as rm
from skillctl.routing.compiled import CompiledManifest, compile_manifest

INDEX_VERSION = 12  # 12: gates keep `always` and required vars, read from metadata too
CHARS_PER_TOKEN = 4  # the usual rough estimate for English text and code
# File systems stamp mtimes with a coarse clock (a tick of a few ms; FAT: 2 s): an edit of a
# SKILL.md within this window of the index write may keep its (mtime, size), so its digest decides.
RACY_WINDOW_NS = 2_000_000_000


@dataclass
class Entry:
    name: str
    path: str
    scope: str
    fingerprint: list[int]
    manifest: rm.RoutingManifest
    tokens: int = 0
    model_invocable: bool = True
    default_enabled: bool = True  # false: offered only once config enables it
    gates: dict = field(default_factory=dict)  # gating.Gates.to_dict() when it declares requirements
    key: str = ""  # the config key (skillKey or name)
    version: str = ""  # the manifest's version, when it declares one
    digest: str = ""  # sha256 of SKILL.md as indexed
    vector: str | None = None  # base64 float16 centroid, when semantic vectors were computed
    examples: str | None = None  # base64 float16 (k, DIM) synthetic-query vectors, when it has queries
    passages: str | None = None  # base64 float16 (k, STATIC_DIM) body-passage vectors, when it has no queries
    compiled: CompiledManifest | None = None  # the manifest's words, stemmed (None: at routing)

    def to_dict(self) -> dict:
        """What the main index file keeps (the vectors go to the sidecar, see _write_vectors)."""
        data = dict(self.__dict__)
        # The body's passages serve semantic routing only: their text goes to the sidecar too,
        # so the lexical path does not parse it (a third of the main file for corpus skills).
        data["manifest"] = {k: v for k, v in self.manifest.to_dict().items() if k != "passages"}
        data["compiled"] = self.compiled.to_dict() if self.compiled is not None else None
        del data["vector"], data["examples"], data["passages"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Entry:
        data = dict(data)
        data["manifest"] = rm.RoutingManifest.from_dict(data["manifest"])
        if data.get("compiled") is not None:
            data["compiled"] = CompiledManifest.from_dict(data["compiled"])
        return cls(**data)


@dataclass
class RoutingIndex:
    entries: list[Entry] = field(default_factory=list)  # kept entries, precedence resolved
    collisions: list[Collision] = field(default_factory=list)
    model: str | None = None
    # Every located folder as it was when loaded, (scope, path, fingerprint), and when: what
    # :meth:`still_current` compares (None: not loaded from folders).
    sources: list[tuple[str, str, list[int] | None]] | None = None
    loaded_ns: int = 0

    def still_current(self, located: Sequence[tuple[str, Path]]) -> bool:
        """Do the located folders still hold what this index was loaded from? One stat per
        skill and no read of the index file: what a long-lived process (the hook's helper)
        asks before reloading. An edit within :data:`RACY_WINDOW_NS` before the load may have
        kept its fingerprint, so such a folder always means "reload" (which compares digests)."""
        if self.sources is None or len(located) != len(self.sources):
            return False
        registry = registry_mtimes()
        now = [(scope, str(folder), fingerprint(folder, registry)) for scope, folder in located]
        settled = self.loaded_ns - RACY_WINDOW_NS
        return now == self.sources and all(fp is None or fp[0] < settled for _, _, fp in now)

    def vectors(self):
        """``semantic.SkillVectors`` (centroids + synthetic-query vectors) in entry order, or
        None if any entry lacks a centroid."""
        if not self.entries or any(e.vector is None for e in self.entries):
            return None
        import numpy as np

        from skillctl.routing.semantic import DIM, STATIC_DIM, SkillVectors

        raw = b"".join(base64.b64decode(e.vector) for e in self.entries)
        centroids = np.frombuffer(raw, dtype=np.float16).reshape(len(self.entries), -1).astype(np.float32)
        dim = centroids.shape[1]

        def matrix(data: str | None, width: int):
            if not data:
                return None
            return np.frombuffer(base64.b64decode(data), dtype=np.float16).reshape(-1, width).astype(np.float32)

        examples = [matrix(e.examples, dim) for e in self.entries]
        # WordLlama's half of a vector (a stand-in encoder's whole vector: it has no such half).
        passages = [matrix(e.passages, STATIC_DIM if dim == DIM else dim) for e in self.entries]
        return SkillVectors.from_lists(centroids, examples, passages=passages)


def index_path(roots: Sequence[tuple[str, Path]]) -> Path:
    key = "\n".join(f"{scope}:{Path(root).resolve()}" for scope, root in roots)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return paths.state_dir() / "routing" / f"index-{digest}.json"


def vectors_path(path: Path) -> Path:
    return path.with_name(path.name[: -len(".json")] + ".vectors.json")


def _read_vectors(path: Path, model: str) -> dict[str, dict]:
    """Skill folder -> {"fingerprint", "vector", "examples", "passages", "passage_texts"} from the
    sidecar, if it matches."""
    try:
        data = json.loads(vectors_path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if data.get("version") != INDEX_VERSION or data.get("model") != model:
        return {}
    return data.get("vectors", {})


def _write_vectors(path: Path, entries: list[Entry], model: str) -> None:
    vectors = {
        e.path: {
            "fingerprint": e.fingerprint,
            "vector": e.vector,
            "examples": e.examples,
            "passages": e.passages,
            "passage_texts": e.manifest.passages,
        }
        for e in entries
        if e.vector is not None
    }
    target = vectors_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    data = {"version": INDEX_VERSION, "model": model, "vectors": vectors}
    tmp.write_text(json.dumps(data, separators=(",", ":")), "utf-8")
    tmp.replace(target)


def registry_mtimes() -> dict[str, int]:
    """Skill name -> mtime of its saved registry manifest (one listing, not a stat per skill)."""
    try:
        return {e.name[:-5]: e.stat().st_mtime_ns for e in os.scandir(rm.registry_dir()) if e.name.endswith(".json")}
    except OSError:
        return {}


def fingerprint(folder: Path, registry: dict[str, int]) -> list[int] | None:
    try:
        st = os.stat(os.path.join(folder, SKILL_FILE))
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, registry.get(os.path.basename(folder), 0)]


def skill_md_digest(folder: Path | str) -> str:
    """sha256 of a skill's SKILL.md ("" when it cannot be read)."""
    try:
        with open(os.path.join(folder, SKILL_FILE), "rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return ""


def build_entry(scope: str, folder: Path, fp: list[int]) -> Entry | None:
    digest = skill_md_digest(folder)
    skill = load_installed(scope, folder)
    if skill is None:
        return None
    m = skill.manifest
    routing = rm.from_skill(m, skill.report.body)
    routing.name = skill.name
    if (data := rm.load_registry_manifest(skill.name)) is not None:
        routing = rm.merge_registry(routing, data)
    return Entry(
        compiled=compile_manifest(routing),
        name=skill.name,
        path=str(folder),
        scope=scope,
        fingerprint=fp,
        manifest=routing,
        tokens=max(1, len(skill.report.body) // CHARS_PER_TOKEN),
        model_invocable=not m.disable_model_invocation,
        default_enabled=m.default_enabled,
        gates=gates.to_dict() if (gates := Gates.of(m)).declared() else {},
        key=m.key or skill.name,
        version=m.version,
        digest=digest,
    )


def _read(path: Path) -> tuple[dict[str, dict], int]:
    """(skill folder -> stored entry, when the index was written in ns) of the index file."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}, 0
    if data.get("version") != INDEX_VERSION:
        return {}, 0
    return {e["path"]: e for e in data.get("entries", [])}, int(data.get("written_ns") or 0)


def _unchanged(old: dict, scope: str, fp: list[int], written_ns: int) -> bool:
    """Is the stored entry still right? Its fingerprint must match; a racy one its digest too."""
    if old["fingerprint"] != fp or old["scope"] != scope:
        return False
    if fp[0] < written_ns - RACY_WINDOW_NS:
        return True
    return old.get("digest") == skill_md_digest(old["path"])


def _write(path: Path, entries: list[Entry], model: str | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    entries_data = [e.to_dict() for e in entries]
    data = {"version": INDEX_VERSION, "model": model, "written_ns": time.time_ns(), "entries": entries_data}
    tmp.write_text(json.dumps(data, separators=(",", ":")), "utf-8")
    tmp.replace(path)


def load_index(
    located: Sequence[tuple[str, Path]],
    *,
    roots: Sequence[tuple[str, Path]],
    semantic: bool = False,
    rebuild: bool = False,
) -> RoutingIndex:
    """The index of the located skills, re-parsing only what changed since the last run."""
    from skillctl.routing import semantic as sem

    loaded_ns = time.time_ns()
    path = index_path(roots)
    stored, written_ns = ({}, 0) if rebuild else _read(path)
    entries, changed = [], rebuild or len(stored) != len(located)
    registry = registry_mtimes()
    racy_until = 0
    sources: list[tuple[str, str, list[int] | None]] = []
    for scope, folder in located:
        fp = fingerprint(folder, registry)
        sources.append((scope, str(folder), fp))
        old = stored.get(str(folder))
        if old is not None and fp is not None and _unchanged(old, scope, fp, written_ns):
            entries.append(Entry.from_dict(old))
            racy_until = max(racy_until, fp[0] + RACY_WINDOW_NS)
        elif fp is not None and (entry := build_entry(scope, folder, fp)):
            entries.append(entry)
            changed = True
    if changed or written_ns <= racy_until < time.time_ns():
        _write(path, entries, None)  # also once the racy entries have aged: they are then trusted
    if semantic:
        stored_vectors = {} if rebuild else _read_vectors(path, sem.MODEL_ID)
        for e in entries:
            v = stored_vectors.get(e.path)
            if v is not None and v.get("fingerprint") == e.fingerprint:
                e.vector, e.examples, e.passages = v.get("vector"), v.get("examples"), v.get("passages")
                e.manifest.passages = list(v.get("passage_texts") or [])
            elif not e.manifest.passages and (fresh := build_entry(e.scope, Path(e.path), e.fingerprint)):
                e.manifest.passages = fresh.manifest.passages  # read from the main index: not kept there
        if any(e.vector is None for e in entries) or len(stored_vectors) != len(entries):
            add_vectors(entries, sem.encoder())
            _write_vectors(path, entries, sem.MODEL_ID)
    keep, collisions = resolve_collisions([(e.name, Path(e.path)) for e in entries])
    return RoutingIndex(
        [entries[i] for i in keep], collisions, sem.MODEL_ID if semantic else None, sources=sources, loaded_ns=loaded_ns
    )


def add_vectors(entries: Sequence[Entry], encoder) -> None:
    """Compute the centroid (and query vectors) of every entry that lacks one (one encode per text)."""
    from skillctl.routing import semantic as sem

    for entry in entries:
        if entry.vector is None:
            texts = sem.centroid_texts(entry.manifest)
            vectors = encoder.encode(texts)
            vector = sem.centroid(vectors)
            entry.vector = base64.b64encode(vector.astype("float16").tobytes()).decode("ascii")
            queries = sem.example_texts(entry.manifest)
            if queries:  # centroid_texts starts with the queries: their vectors are already there
                examples = vectors[: len(queries)] if texts[: len(queries)] == queries else encoder.encode(queries)
                entry.examples = base64.b64encode(examples.astype("float16").tobytes()).decode("ascii")
            if passages := sem.passage_texts(entry.manifest):
                vectors = sem.encode_passages(encoder, passages)
                entry.passages = base64.b64encode(vectors.astype("float16").tobytes()).decode("ascii")
