"""``manage.py demo_signin``: a fresh random password for the demo user, printed (make run)."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Give the demo user a new random password and print the sign-in."

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username="demo").first()
        if user is None:
            raise CommandError("no demo user: run `manage.py seed_demo` first")
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.save(update_fields=["password"])
        self.stdout.write(f"demo / {password}")
