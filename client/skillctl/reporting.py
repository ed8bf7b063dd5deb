"""How library code tells its caller what is going on, without writing to a terminal itself.

The installer, verification and downloads report through a :class:`Reporter` they are handed.
The base class is quiet: it keeps warnings in :attr:`Reporter.warnings`, draws no progress and
answers no to every question, which is what an embedding application (``SkillSet``, a script,
a server) wants. The CLI hands in a :class:`ConsoleReporter`, which writes to stderr through
:mod:`skillctl.console` and draws rich progress bars on a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Advance = Callable[[int], None]


class Reporter:
    """Quiet: warnings are kept, progress is not drawn, questions are answered no."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def info(self, message: str) -> None:
        """Something worth a line on a terminal (waiting for a lock, say); dropped here."""

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def confirm(self, question: str) -> bool:
        """Ask the user; without one to ask, the answer is no."""
        return False

    @contextmanager
    def progress(self, label: str, total: int | None = None, *, unit: str = "bytes") -> Iterator[Advance]:
        """A progress display for ``total`` units (bytes, or items); the caller advances it."""
        yield _ignore

    @contextmanager
    def quiet_progress(self) -> Iterator[None]:
        """Inside, ``progress`` draws nothing (one overall bar instead of many)."""
        yield


def _ignore(_n: int) -> None:
    return None


class ConsoleReporter(Reporter):
    """The CLI's reporter: messages on stderr, progress bars when stderr is a terminal."""

    def __init__(self, *, progress: bool = True, interactive: bool | None = None) -> None:
        super().__init__()
        self._progress = progress and sys.stderr.isatty()
        self._interactive = interactive

    def info(self, message: str) -> None:
        from skillctl import console

        console.info(message)

    def warn(self, message: str) -> None:
        from skillctl import console

        super().warn(message)
        console.warn(message)

    def confirm(self, question: str) -> bool:
        interactive = self._interactive
        if interactive is None:
            interactive = sys.stdin.isatty() and sys.stderr.isatty()
        if not interactive:
            return False
        import click

        return click.confirm(question, default=False, err=True)

    @contextmanager
    def progress(self, label: str, total: int | None = None, *, unit: str = "bytes") -> Iterator[Advance]:
        if not self._progress:
            yield _ignore
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TransferSpeedColumn,
        )

        from skillctl.console import rich_console

        columns: list[ProgressColumn] = [TextColumn("{task.description}"), BarColumn()]
        columns += [DownloadColumn(), TransferSpeedColumn()] if unit == "bytes" else [MofNCompleteColumn()]
        with Progress(*columns, console=rich_console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total)
            yield lambda n: bar.advance(task, n)

    @contextmanager
    def quiet_progress(self) -> Iterator[None]:
        drawn, self._progress = self._progress, False
        try:
            yield
        finally:
            self._progress = drawn
