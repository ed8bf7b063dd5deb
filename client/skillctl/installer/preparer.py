"""Getting any source into the cache as a checked archive (pip's ``RequirementPreparer``).

The preparer knows nothing about scopes, locks on disk or placing: it turns a
:class:`~skillctl.installer.arguments.Source` (and, when installing from the lock, the
:class:`~skillctl.installer.project.Locked` entry it must match) into a
:class:`~skillctl.installer.fetchers.Fetched` archive. Registry sources go through the
:class:`~skillctl.installer.resolution.RegistryResolver`; every other kind through its fetcher.
"""

from __future__ import annotations

from skillctl.installer.arguments import Source, SourceKind
from skillctl.installer.fetchers import FETCHERS, Fetched
from skillctl.installer.project import Locked
from skillctl.installer.resolution import RegistryResolver
from skillctl.reporting import Reporter


class Preparer:
    def __init__(self, resolver: RegistryResolver, reporter: Reporter | None = None) -> None:
        self.resolver = resolver
        self.reporter = reporter or resolver.reporter

    def fetch(self, source: Source, *, locked: Locked | None = None) -> Fetched:
        """Get ``source`` into the cache; with ``locked``, exactly what the lock says."""
        if source.kind is SourceKind.REGISTRY:
            return self.resolver.fetch(source, locked)
        return FETCHERS[source.kind](source, locked, self.reporter)

    def warm(self, jobs: list[tuple[Source, Locked | None]]) -> None:
        self.resolver.warm(jobs)

    def prefetch_manifests(self, fetched: list[Fetched]) -> None:
        """Fetch the routing manifests of these registry skills now, in one request per
        registry; placing reads the kept answers. A failure is left for placing to report."""
        self.resolver.prefetch_manifests(fetched)
