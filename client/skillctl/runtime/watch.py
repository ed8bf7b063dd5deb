"""Live reload: ``SkillSet.watch()`` re-indexes the skills when their folders change.

A daemon thread runs watchfiles (inotify, FSEvents, ReadDirectoryChangesW) over the skill roots
that exist; a root that does not exist yet (``.agents/skills`` in a fresh project) is looked for
every :data:`NEW_ROOT_POLL_MS`, and once it appears the watch starts again with it (and a reload reads it). A burst of changes (an editor's save, an install writing a folder) is
grouped for up to :data:`DEBOUNCE_MS` and ends after :data:`STEP_MS` of quiet; then
``SkillSet.reload()`` reads again only what changed (the routing index's fingerprints), so the
next ``route()`` or ``prompt()`` sees new, edited and removed skills. Running sessions keep their
snapshot (:mod:`skillctl.runtime.snapshot`). The first time the watcher is armed it reloads once,
for what changed while it was starting. A failed reload is reported through the SkillSet's
Reporter and watching goes on.

    with SkillSet.discover() as skills:     # close() stops the watcher
        watcher = skills.watch()
        ...
        watcher.stop()                      # or leave it to close()

watchfiles comes with the ``agent`` extra (``pip install 'skillyard[agent]'``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from skillctl.runtime.sdk import require_watchfiles

DEBOUNCE_MS = 250  # the longest a burst is grouped: a save is several events, an install many files
STEP_MS = 50  # quiet that ends a burst; also how soon stop() is noticed
IDLE_WAKE_MS = 1000  # an idle watcher wakes this often (the first wake says it is armed); costs nothing
# While a skill root does not exist, the watcher wakes this often to look for it: a stat per
# missing root, and a folder created later is read well within the second a change may take.
NEW_ROOT_POLL_MS = 250
STOP_TIMEOUT_S = 5.0  # stop() waits this long for the thread (a reload in progress finishes first)


class Watcher:
    """One background thread re-indexing one SkillSet; ``stop()`` ends it."""

    def __init__(self, skills, *, debounce_ms: int = DEBOUNCE_MS, on_reload: Callable[[], None] | None = None) -> None:
        self.skills = skills
        self.debounce_ms = debounce_ms
        self.on_reload = on_reload
        self.roots = [Path(root) for _, root in skills.roots if Path(root).is_dir()]
        self.missing = [Path(root) for _, root in skills.roots if not Path(root).is_dir()]
        self.reloads = 0  # reloads that changed something
        self.armed = threading.Event()  # set once the file system watch is in place
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="skillctl-watch", daemon=True)

    def start(self) -> Watcher:
        require_watchfiles()
        if not self.roots:
            self.armed.set()  # nothing to watch yet: nothing to wait for
        if self.roots or self.missing:
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait_armed(self, timeout: float = 10.0) -> bool:
        """True once changes are seen (the watch is in place); False after ``timeout`` seconds."""
        return self.armed.wait(timeout)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self.roots:
                    self._watch_until_a_root_appears()
                elif self._stop.wait(NEW_ROOT_POLL_MS / 1000):
                    return
                if self._take_new_roots():
                    self._reload()
        except Exception as exc:  # noqa: BLE001 - a watch that cannot go on is reported, never raised in a thread
            self.skills.reporter.warn(f"watching the skill folders stopped: {type(exc).__name__}: {exc}")
        finally:
            self.armed.set()

    def _watch_until_a_root_appears(self) -> None:
        """Watch the roots there are until stop() or until a missing root appears. The first wake
        of each watch reloads once: what changed before the watch was in place."""
        import watchfiles

        batches = watchfiles.watch(
            *self.roots,
            debounce=self.debounce_ms,
            step=STEP_MS,
            stop_event=self._stop,
            rust_timeout=NEW_ROOT_POLL_MS if self.missing else IDLE_WAKE_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        )
        first = True
        try:
            for changes in batches:
                if changes or first:
                    self._reload()
                first = False
                self.armed.set()
                if any(root.is_dir() for root in self.missing):
                    return
        finally:
            batches.close()

    def _take_new_roots(self) -> bool:
        """Move the missing roots that exist now to the watched ones; True when any did."""
        appeared = [root for root in self.missing if root.is_dir()]
        self.missing = [root for root in self.missing if root not in appeared]
        self.roots += appeared
        return bool(appeared)

    def _reload(self) -> None:
        try:
            changed = self.skills.reload()
        except Exception as exc:  # noqa: BLE001 - the next change tries again
            self.skills.reporter.warn(f"reloading the skills failed: {type(exc).__name__}: {exc}")
            return
        if changed:
            self.reloads += 1
            if self.on_reload is not None:
                self.on_reload()

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()
