"""``manage.py issue_token USERNAME [--scope ...] [--owner NAME] [--expires-days N] [--replace]``.

Prints a new token as the last line of stdout (scripts take ``| tail -1``); it is never shown again.
``--replace`` first revokes the user's live tokens of the same ``--name`` (``make run`` prints a
fresh demo token on every start without piling up live ones).
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from registry import selectors, services
from registry.access import SCOPE_RANK, Actor
from registry.errors import RegistryError


class Command(BaseCommand):
    help = "Create an API token for a user and print it (last line)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--scope", choices=list(SCOPE_RANK), default="publish")
        parser.add_argument("--owner", help="limit the token to this user or organisation")
        parser.add_argument("--expires-days", type=int, default=None)
        parser.add_argument("--name", default="issued by manage.py")
        parser.add_argument("--create-user", action="store_true", help="create the user if missing")
        parser.add_argument("--replace", action="store_true", help="revoke the user's live tokens of this name first")

    def handle(self, *args, username, scope, owner, expires_days, name, create_user, replace, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None and create_user:
            try:
                user = services.user_create(username=username)
            except RegistryError as exc:  # a reserved or taken name: say so, no traceback
                raise CommandError(f"{exc.code}: {exc.message}") from exc
        if user is None:
            raise CommandError(f"no user named {username!r} (use --create-user)")
        try:
            with transaction.atomic():  # --replace: never left with the old tokens revoked and no new one
                if replace:
                    for old in selectors.token_list(user=user).filter(name=name, revoked_at__isnull=True):
                        services.token_revoke(actor=Actor(user), token_id=old.id)
                target = selectors.owner_get(name=owner) if owner else None
                token, secret = services.token_create(
                    actor=Actor(user), scope=scope, owner=target, name=name, expires_days=expires_days
                )
        except RegistryError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        self.stderr.write(
            f"token {token.prefix}… scope={scope} owner={owner or '*'} expires={token.expires_at:%Y-%m-%d}"
        )
        self.stdout.write(secret)
