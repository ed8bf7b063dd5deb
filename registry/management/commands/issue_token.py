"""``manage.py issue_token USERNAME [--scope ...] [--owner NAME] [--expires-days N] [--replace]``.

Prints a new token as the last line of stdout (scripts take ``| tail -1``); it is never shown again.
``--replace`` first revokes the user's live tokens of the same ``--name``. ``--keep FILE`` prints
the token saved in FILE while it still works for this user, name and scope, else issues one and
saves it there (owner-only): ``make run`` prints the same demo token on every start, so a token
the user saved keeps working across restarts.
"""

import os
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from registry import selectors, services
from registry.access import SCOPE_RANK, Actor
from registry.errors import RegistryError, Unauthenticated


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
        parser.add_argument(
            "--keep", type=Path, help="reuse the token saved in this file while it works; save a new one"
        )

    def handle(self, *args, username, scope, owner, expires_days, name, create_user, replace, keep, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None and create_user:
            try:
                user = services.user_create(username=username)
            except RegistryError as exc:  # a reserved or taken name: say so, no traceback
                raise CommandError(f"{exc.code}: {exc.message}") from exc
        if user is None:
            raise CommandError(f"no user named {username!r} (use --create-user)")
        if keep and (kept := _kept_secret(keep, user=user, name=name, scope=scope)):
            self.stderr.write(f"token kept in {keep}")
            self.stdout.write(kept)
            return
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
        if keep:
            _save_secret(keep, secret)
        self.stdout.write(secret)


def _kept_secret(path: Path, *, user, name: str, scope: str) -> str | None:  # noqa: ANN001
    """The secret saved in ``path`` if it is a live token of ``user`` with this name and scope."""
    try:
        secret = path.read_text("utf-8").strip()
        token = selectors.token_get_live(secret=secret)
    except (OSError, UnicodeDecodeError, Unauthenticated):
        return None
    return secret if (token.user_id, token.name, token.scope) == (user.id, name, scope) else None


def _save_secret(path: Path, secret: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # a credential: owner-only
    os.fchmod(fd, 0o600)  # also when the file was there already
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
