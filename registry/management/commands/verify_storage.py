"""``manage.py verify_storage [--quiet]``: is every archive the database refers to in the archive
storage, whole (its size and sha256 read back), and is nothing stored that no version refers to?

Run it after restoring a backup (docs/operations.md), after moving storage, or on a schedule:
each version's archive is read back in full, once per distinct key (identical bytes published
twice share one key), so it costs one full read of the bucket or folder. Deleted versions are
verified too: their archives are kept for audits. An orphan is an object under ``archives/``
no version names (a restore from a newer storage copy than the database, or a publish that
died between storing and committing); ``.part`` files are left to ``sweep_uploads``.

Exit 0 when everything matches, 1 when anything is missing, corrupt or orphaned (each listed).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.core.management.base import BaseCommand, CommandError

from registry.models import SkillVersion
from registry.storage import PART_SUFFIX, archive_exists, archive_matches, archive_storage

ROOT = "archives"  # every key is archives/sha256/ab/cd/<sha256>.<ext> (registry/storage.py)


def stored_keys(prefix: str = ROOT) -> Iterator[str]:
    """Every object below ``prefix``, walking the content-addressed folders (none yet: nothing)."""
    try:
        folders, files = archive_storage().listdir(prefix)
    except FileNotFoundError:
        return  # a folder storage before its first publish (S3 lists an empty prefix as empty)
    for name in files:
        if not name.endswith(PART_SUFFIX):
            yield f"{prefix}/{name}"
    for folder in folders:
        yield from stored_keys(f"{prefix}/{folder}")


class Command(BaseCommand):
    help = "Check every stored archive against its sha256 and size, and list objects no version refers to."

    def add_arguments(self, parser):
        parser.add_argument("--quiet", action="store_true", help="print only problems and the summary")

    def handle(self, *args, quiet: bool, **options):
        expected: dict[str, tuple[str, int, list[str]]] = {}
        rows = SkillVersion.objects.values_list("archive_key", "sha256", "size", "skill__name", "version")
        for key, sha256, size, name, version in rows.iterator():
            expected.setdefault(key, (sha256, size, []))[2].append(f"{name}@{version}")
        problems = 0
        for key, (sha256, size, versions) in sorted(expected.items()):
            state = self._state(key, sha256=sha256, size=size)
            problems += state != "ok"
            if state != "ok" or not quiet:
                self.stdout.write(f"{state:<8}{key}  {', '.join(sorted(versions))}")
        orphans = sorted(set(stored_keys()) - set(expected))
        for key in orphans:
            self.stdout.write(f"{'orphan':<8}{key}")
        summary = f"{len(expected)} archive(s) checked, {problems} missing or corrupt, {len(orphans)} orphan(s)"
        if problems or orphans:
            raise CommandError(summary)
        self.stdout.write(summary)

    @staticmethod
    def _state(key: str, *, sha256: str, size: int) -> str:
        if not archive_exists(key):
            return "missing"
        return "ok" if archive_matches(key, sha256=sha256, size=size) else "corrupt"
