"""``manage.py rerun_checks [--check NAME] [--since DATE] [--stale [--stale-after SECONDS]]``: queue
publish checks again (a new scanner release, a fixed test environment), or only those a dead
worker left running (what the workers' beat schedule does every five minutes)."""

from datetime import datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from registry import services
from registry.models import SkillVersion, VersionCheck
from worker.tasks import CHECK_STALE_SECONDS


class Command(BaseCommand):
    help = "Queue publish checks again for published versions."

    def add_arguments(self, parser):
        parser.add_argument("--check", choices=VersionCheck.Name.values, help="only this check (default: all)")
        parser.add_argument("--since", help="only versions published on or after this date (YYYY-MM-DD)")
        parser.add_argument("--stale", action="store_true", help="only checks a dead worker left running")
        parser.add_argument(
            "--stale-after",
            type=float,
            default=CHECK_STALE_SECONDS,
            metavar="SECONDS",
            help=f"with --stale: running longer than this counts as left behind (default {CHECK_STALE_SECONDS})",
        )

    def handle(self, *args, check, since, stale, stale_after, **options):
        if stale:
            count = services.checks_sweep(stale_after=timedelta(seconds=stale_after))
            self.stdout.write(f"re-queued {count} stale check(s)")
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
