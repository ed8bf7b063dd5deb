"""Remove partial archive writes and upload temp files left by killed processes (at start-up:
scripts/run.sh, the image's command). A file a live process is writing is never removed: its
writer holds it locked (registry/leftovers.py), so no age rule is needed."""

from django.core.management.base import BaseCommand

from registry.storage import sweep_partial_files


class Command(BaseCommand):
    help = "Remove .part archive files and upload temp files that no live process is writing."

    def add_arguments(self, parser):
        parser.add_argument("--age", type=float, default=0, help="only files at least this many seconds old")

    def handle(self, *args, age: float, **options):
        removed = sweep_partial_files(older_than_seconds=age)
        self.stdout.write(f"removed {len(removed)} leftover file(s)")
