"""Remove partial archive writes and upload temp files left by killed web workers."""

from django.core.management.base import BaseCommand

from registry.storage import sweep_partial_files

# Older than any upload still in flight: the body read timeout and a 50 MiB write are far shorter.
DEFAULT_AGE_SECONDS = 3600


class Command(BaseCommand):
    help = "Remove .part archive files and upload temp files older than --age seconds."

    def add_arguments(self, parser):
        parser.add_argument("--age", type=float, default=DEFAULT_AGE_SECONDS)

    def handle(self, *args, age: float, **options):
        removed = sweep_partial_files(older_than_seconds=age)
        self.stdout.write(f"removed {len(removed)} leftover file(s)")
