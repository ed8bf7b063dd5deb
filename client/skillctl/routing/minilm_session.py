"""MiniLM's onnxruntime session, with its optimised graph cached: what a cold start loads.

The shipped graph is int8: each weight is stored quantised behind a DequantizeLinear node.
onnxruntime's basic graph optimisations fold those nodes into float32 weights when a session is
created, which makes an encode ~7x faster than running the graph as shipped but costs ~0.15-0.2 s
of every new process (bench/README, route_speed: most of a cold ``skillctl hook claude``). The
first session saves the optimised graph under ``cache_dir()/routing`` (its float32 weights,
~90 MB, in a side file); later processes load that file with optimisation switched off: ~50 ms,
the same vectors bit for bit. The copy is keyed by the source file (path, size, mtime), the
onnxruntime version and the optimisation level, so an upgrade of either is never mixed with an
old copy; anything wrong with it (unreadable, unwritable folder, a copy onnxruntime refuses) and
the session is built from the shipped file as before. Each load marks its copy as used; a copy no
process has loaded for ``UNUSED_DAYS`` (an upgraded onnxruntime's or a removed install's) is
deleted when a new one is saved, so upgrades do not pile up ~90 MB each, while two installs that
share the cache folder keep theirs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from skillctl import paths

CACHE_FORMAT = 1  # bump when what is saved changes (options, layout)
GRAPH_FILE, WEIGHTS_FILE = "model.onnx", "model.data"
# Initialisers this big or bigger go to WEIGHTS_FILE (all the weight matrices); smaller ones stay
# in the graph file.
EXTERNAL_MIN_BYTES = 1024
STALE_TEMP_SECONDS = 3600  # a half-written copy this old is a crashed writer's: removed
UNUSED_DAYS = 30  # a saved copy no process has loaded for this long is removed


def session(model: Path, *, threads: int = 1):
    """An ``onnxruntime.InferenceSession`` of ``model`` with basic graph optimisations, read from
    the cached optimised copy when there is one (else built, and the copy saved for next time)."""
    import onnxruntime as ort

    cached = cached_dir(model, ort.__version__)
    if cached.exists():
        try:
            loaded = _session(ort, cached / GRAPH_FILE, threads, optimise=False)
            _mark_used(cached)
            return loaded
        except Exception:  # noqa: BLE001 - a copy onnxruntime refuses (or none) is rebuilt below
            shutil.rmtree(cached, ignore_errors=True)
    return _build_and_save(ort, model, cached, threads)


def cached_dir(model: Path, ort_version: str) -> Path:
    """Where the optimised copy of ``model`` lives (whether or not it exists yet)."""
    try:
        st = model.stat()
        identity = f"{model.resolve()}\n{st.st_size}\n{st.st_mtime_ns}"
    except OSError:
        identity = str(model)
    key = f"{CACHE_FORMAT}\n{ort_version}\nbasic\n{identity}"
    return paths.cache_dir() / "routing" / f"minilm-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _options(ort, threads: int, *, optimise: bool):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # one encode per message; threads cost more than they give
    options.inter_op_num_threads = 1
    # Basic: measured fastest for this int8 graph (extended and all fuse more, encode no faster).
    level = ort.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_BASIC if optimise else level.ORT_DISABLE_ALL
    return options


def _session(ort, model: Path, threads: int, *, optimise: bool, save_to: Path | None = None):
    options = _options(ort, threads, optimise=optimise)
    if save_to is not None:
        options.optimized_model_filepath = str(save_to / GRAPH_FILE)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS_FILE)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", str(EXTERNAL_MIN_BYTES)
        )
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def _build_and_save(ort, model: Path, cached: Path, threads: int):
    """The session built from ``model``; its optimised graph saved to ``cached`` on the way
    (written to a temporary folder first, then renamed: a reader sees a whole copy or none)."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        _sweep(cached.parent)
        temp = Path(tempfile.mkdtemp(prefix=f".{cached.name}.", dir=cached.parent))
    except OSError:
        return _session(ort, model, threads, optimise=True)  # a read-only cache: optimised each time
    built = None
    try:
        built = _session(ort, model, threads, optimise=True, save_to=temp)
        for name in (GRAPH_FILE, WEIGHTS_FILE):
            _fsync(temp / name)
        os.rename(temp, cached)
    except Exception:  # noqa: BLE001 - another process published first, a full disk: no copy this time
        shutil.rmtree(temp, ignore_errors=True)
    return built if built is not None else _session(ort, model, threads, optimise=True)


def _fsync(path: Path) -> None:
    with open(path, "rb") as file:
        os.fsync(file.fileno())


def _mark_used(cached: Path) -> None:
    """The copy's folder mtime says when a process last loaded it (at most once an hour)."""
    try:
        if time.time() - cached.stat().st_mtime > STALE_TEMP_SECONDS:
            os.utime(cached)
    except OSError:
        pass


def _sweep(folder: Path) -> None:
    """Remove temporary copies a crashed writer left behind, and saved copies unused for
    ``UNUSED_DAYS``."""
    now = time.time()
    for pattern, age in ((".minilm-*", STALE_TEMP_SECONDS), ("minilm-*", UNUSED_DAYS * 86400)):
        for entry in folder.glob(pattern):
            try:
                if now - entry.stat().st_mtime > age:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                pass
