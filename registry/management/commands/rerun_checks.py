"""``manage.py rerun_checks [--check NAME] [--since DATE] [--vectors]
[--stale [--stale-after SECONDS] [--pending-after SECONDS]]
[--check scan --rules-changed]``:
queue publish checks again (a new scanner release, a fixed test environment), or only those whose
run or message was lost: left running by a dead worker, or pending with no message left to run
them (what the workers' beat schedule does every ``SKILLYARD_CHECK_SWEEP_SECONDS``). ``--vectors``
makes the catalog's search vectors again where another embedder made them (after an upgrade;
`make run` does it on start), from each version's stored routing manifest: no check runs again.
``--check scan --rules-changed`` queues a new scan of every version the scanner judged with older
rules, newest first (what the workers' beat, or the embedded runner at start-up, does a batch at
a time); the other checks keep their results."""

from datetime import datetime, timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from registry import services
from registry.models import SkillVersion, VersionCheck
from registry.storage import archive_open


class Command(BaseCommand):
    help = "Queue publish checks again for published versions."

    def add_arguments(self, parser):
        parser.add_argument("--check", choices=VersionCheck.Name.values, help="only this check (default: all)")
        parser.add_argument("--since", help="only versions published on or after this date (YYYY-MM-DD)")
        parser.add_argument(
            "--stale",
            action="store_true",
            help="only checks a dead worker left running, or left pending by a lost queue message",
        )
        parser.add_argument(
            "--vectors",
            action="store_true",
            help="only make the catalog search vectors again where another embedder made them",
        )
        parser.add_argument(
            "--rules-changed",
            action="store_true",
            help="with --check scan: only versions the scanner judged with older rules than its own",
        )
        parser.add_argument(
            "--stale-after",
            type=float,
            metavar="SECONDS",
            help="with --stale: running longer than this counts as left behind "
            f"(default SKILLYARD_CHECK_STALE_SECONDS, here {settings.SKILLYARD_CHECK_STALE_SECONDS})",
        )
        parser.add_argument(
            "--pending-after",
            type=float,
            metavar="SECONDS",
            help="with --stale: pending longer than this counts as a lost message "
            f"(default SKILLYARD_CHECK_PENDING_SECONDS, here {settings.SKILLYARD_CHECK_PENDING_SECONDS})",
        )

    def handle(self, *args, check, since, stale, stale_after, pending_after, vectors, rules_changed, **options):
        if rules_changed:
            self._rules_changed(check)
            return
        if vectors:
            self._vectors()
            return
        if stale:
            self._stale(stale_after, pending_after)
            return
        versions = SkillVersion.objects.live().select_related("skill")
        if since:
            try:
                start = timezone.make_aware(datetime.fromisoformat(since))
            except ValueError:
                raise CommandError(f"--since {since!r} is not a date (YYYY-MM-DD)") from None
            versions = versions.filter(published_at__gte=start)
        names = [check] if check else list(VersionCheck.Name.values)
        versions = list(versions)
        services.checks_reset(versions=versions, names=names)
        self.stdout.write(f"queued {len(versions) * len(names)} check(s) for {len(versions)} version(s)")

    def _stale(self, stale_after: float | None, pending_after: float | None) -> None:
        running = settings.SKILLYARD_CHECK_STALE_SECONDS if stale_after is None else stale_after
        pending = settings.SKILLYARD_CHECK_PENDING_SECONDS if pending_after is None else pending_after
        count = services.checks_sweep(stale_after=timedelta(seconds=running), pending_after=timedelta(seconds=pending))
        self.stdout.write(f"re-queued {count} stale check(s)")

    def _rules_changed(self, check: str | None) -> None:
        from worker.engines.scan import rules_version

        if check != VersionCheck.Name.SCAN:
            raise CommandError("--rules-changed goes with --check scan (only the scan has rules)")
        count = services.checks_rescan(rules_version=rules_version())
        self.stdout.write(f"queued {count} scan(s) of versions judged with rules older than {rules_version()}")

    def _vectors(self) -> None:
        from worker.engines.manifest import VECTOR_MODEL, routing_vector, vectors_available

        if not vectors_available():
            self.stdout.write("semantic search is off here (the semantic extra is not installed): nothing to do")
            return
        stale = (
            VersionCheck.objects.filter(name=VersionCheck.Name.MANIFEST, status=VersionCheck.Status.DONE)
            .filter(version__deleted_at__isnull=True)
            .exclude(version__routing_vector_model=VECTOR_MODEL, version__routing_vector__isnull=False)
            .select_related("version")
        )
        made = 0
        for found in stale.iterator():  # the encoder loads on the first one only (~1 s)
            version = found.version
            try:
                with archive_open(version.archive_key) as handle:
                    vector = routing_vector(archive=handle.read(), result=found.result)
            except Exception as exc:  # noqa: BLE001 - one unreadable archive does not stop the others
                self.stderr.write(f"{version.skill.name}@{version.version}: {type(exc).__name__}: {exc}")
                continue
            if vector is not None:
                services.skill_version_vector_set(version_id=version.id, vector=vector, model=VECTOR_MODEL)
                made += 1
        self.stdout.write(f"made {made} search vector(s) with {VECTOR_MODEL}")
