"""``manage.py seed_demo``: a demo user and organisation with the skills in registry/demo_skills.

Safe to run again: archives are packed reproducibly, so a second run publishes identical bytes
and the registry answers "already published" instead of creating anything.
"""

from pathlib import Path
from tempfile import TemporaryDirectory

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from registry import services
from registry.access import Actor
from registry.models import Owner
from skillctl.format import pack_skill

DEMO_SKILLS = Path(__file__).resolve().parents[2] / "demo_skills"
ORG_DESCRIPTION = "The skills that come with Skillyard, to try installing, searching and publishing with."


class Command(BaseCommand):
    help = "Publish the demo skills (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="demo")
        parser.add_argument("--org", default="skillyard-demo")

    def handle(self, *args, username, org, **options):
        user = get_user_model().objects.filter(username=username).first() or services.user_create(username=username)
        actor = Actor(user)
        if not Owner.objects.filter(name=org).exists():
            created = services.org_create(actor=actor, name=org)
            services.owner_describe(actor=actor, owner=created, description=ORG_DESCRIPTION)
        with TemporaryDirectory() as tmp:
            for folder in sorted(p for p in DEMO_SKILLS.iterdir() if (p / "SKILL.md").is_file()):
                archive = Path(tmp) / f"{folder.name}.zip"
                pack_skill(folder, archive)
                with archive.open("rb") as handle:
                    result = services.skill_version_publish(actor=actor, name=folder.name, archive=handle, owner=org)
                state = "published" if result.created else "already published"
                self.stdout.write(f"{folder.name}@{result.version.version}: {state}")
