"""Users, organisations, memberships and tokens."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from registry.access import ROLE_RANK, SCOPE_RANK, Actor, owner_role, require
from registry.errors import Conflict, Forbidden, Invalid, NotFound, Unauthenticated
from registry.models import MAX_OWNER_DESCRIPTION, Membership, Owner, Role, Token, TokenScope
from registry.names import canonical_name, name_reserved
from registry.services.audit import audit_record

TOKEN_PREFIX = "sky_"
OWNER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$")


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _owner_create(*, name: str, kind: str, user=None) -> Owner:
    if not OWNER_NAME.match(name):
        raise Invalid("owner.name_invalid", "Use letters, digits, '-', '_' or '.' (at most 64).")
    if Owner.objects.filter(canonical_name=canonical_name(name)).exists():
        raise Conflict("owner.name_taken", f"{name!r} is taken or too similar to an existing owner.")
    try:
        with transaction.atomic():
            return Owner.objects.create(name=name, canonical_name=canonical_name(name), kind=kind, user=user)
    except IntegrityError as exc:
        raise Conflict("owner.name_taken", f"{name!r} is taken or too similar to an existing owner.") from exc


def _name_not_reserved(name: str) -> None:
    """Every path that creates a user or an organisation passes here (``createsuperuser`` does not)."""
    if name_reserved(name):
        raise Invalid("owner.name_reserved", f"{name!r} is reserved by the registry; choose another name.")


@transaction.atomic
def user_create(*, username: str, password: str | None = None, email: str = "", is_staff: bool = False):
    """A user and their personal namespace, in which they are the owner."""
    _name_not_reserved(username)
    user = get_user_model().objects.create_user(
        username=username, password=password, email=email, is_staff=is_staff, is_superuser=is_staff
    )
    user_owner_ensure(user=user)
    return user


def user_owner_ensure(*, user: User) -> Owner:
    """The user's personal owner, created on first need (users may come from createsuperuser)."""
    owner = Owner.objects.filter(user=user).first()
    if owner is None:
        with transaction.atomic():
            owner = _owner_create(name=user.username, kind=Owner.Kind.USER, user=user)
            Membership.objects.create(owner=owner, user=user, role=Role.OWNER)
    return owner


@transaction.atomic
def org_create(*, actor: Actor, name: str) -> Owner:
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in or send a token to create an organisation.")
    if actor.token is not None and actor.token.scope != TokenScope.ADMIN:
        raise Forbidden("token.scope", "Creating an organisation needs an admin token.")
    _name_not_reserved(name)
    user_owner_ensure(user=actor.account)  # the creator's own namespace claims their name first
    org = _owner_create(name=name, kind=Owner.Kind.ORG)
    Membership.objects.create(owner=org, user=actor.account, role=Role.OWNER)
    audit_record(actor=actor, action="org.create", owner=org.name)
    return org


@transaction.atomic
def org_member_set(*, actor: Actor, org: Owner, username: str, role: str) -> Membership:
    if org.kind != Owner.Kind.ORG:
        raise Invalid("owner.not_org", f"{org.name} is a user, not an organisation.")
    if role not in ROLE_RANK:
        raise Invalid("member.role_invalid", f"role must be one of {', '.join(ROLE_RANK)}.")
    require(actor, owner=org, role=Role.ADMIN, scope=TokenScope.ADMIN)
    if role == Role.OWNER and owner_role(user=actor.user, owner=org) != Role.OWNER:
        raise Forbidden("permission.role", "Only an owner can make someone an owner.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound("user.not_found", f"No user named {username!r}.")
    membership, _ = Membership.objects.update_or_create(owner=org, user=user, defaults={"role": role})
    audit_record(actor=actor, action="member.set", owner=org.name, username=username, role=role)
    return membership


@transaction.atomic
def org_member_remove(*, actor: Actor, org: Owner, username: str) -> None:
    require(actor, owner=org, role=Role.ADMIN, scope=TokenScope.ADMIN)
    membership = Membership.objects.filter(owner=org, user__username=username).first()
    if membership is None:
        raise NotFound("member.not_found", f"{username} is not a member of {org.name}.")
    owners = Membership.objects.filter(owner=org, role=Role.OWNER)
    if membership.role == Role.OWNER and owners.count() == 1:
        raise Conflict("member.last_owner", "An organisation keeps at least one owner.")
    membership.delete()
    audit_record(actor=actor, action="member.remove", owner=org.name, username=username)


@transaction.atomic
def owner_describe(*, actor: Actor, owner: Owner, description: str) -> Owner:
    """Set the paragraph an owner's page and the publishers index show (its admins and owners)."""
    require(actor, owner=owner, role=Role.ADMIN, scope=TokenScope.ADMIN)
    text = " ".join(description.split())
    if len(text) > MAX_OWNER_DESCRIPTION:
        raise Invalid("owner.description_too_long", f"At most {MAX_OWNER_DESCRIPTION} characters.")
    owner.description = text
    owner.save(update_fields=["description"])
    audit_record(actor=actor, action="owner.describe", owner=owner.name)
    return owner


@transaction.atomic
def token_create(
    *,
    actor: Actor,
    scope: str,
    owner: Owner | None = None,
    name: str = "",
    expires_days: int | None = None,
) -> tuple[Token, str]:
    """A new token and its secret; the secret is returned here once and never stored."""
    if scope not in SCOPE_RANK:
        raise Invalid("token.scope_invalid", f"scope must be one of {', '.join(SCOPE_RANK)}.")
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in to create a token.")
    _token_may_mint(actor=actor, owner=owner)
    if owner is not None and owner_role(user=actor.user, owner=owner) is None:
        raise Forbidden("permission.role", f"You are not a member of {owner.name}.")
    days = settings.SKILLYARD_TOKEN_DEFAULT_EXPIRY_DAYS if expires_days is None else expires_days
    if days <= 0:
        raise Invalid("token.expiry_invalid", "expires_days must be positive.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = Token.objects.create(
        user=actor.account,
        owner=owner,
        name=name,
        scope=scope,
        prefix=secret[: len(TOKEN_PREFIX) + 6],
        digest=token_digest(secret),
        expires_at=timezone.now() + timedelta(days=days),
    )
    audit_record(actor=actor, action="token.create", owner=owner.name if owner else "", scope=scope, token=token.prefix)
    return token, secret


def _token_may_mint(*, actor: Actor, owner: Owner | None) -> None:
    """A token can mint tokens only with admin scope and never beyond its own owner."""
    parent = actor.token
    if parent is None:
        return
    if parent.scope != TokenScope.ADMIN:
        raise Forbidden("token.scope", "Creating tokens needs a session or an admin token.")
    if parent.owner_id is not None and (owner is None or owner.id != parent.owner_id):
        raise Forbidden("token.owner", "A token scoped to one owner can only create tokens for it.")


@transaction.atomic
def token_revoke(*, actor: Actor, token_id: int) -> Token:
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in to revoke a token.")
    token = Token.objects.filter(id=token_id, user=actor.account, revoked_at__isnull=True).first()
    if token is None:
        raise NotFound("token.not_found", "No such token.")
    if actor.token is not None and actor.token.id != token.id and actor.token.scope != TokenScope.ADMIN:
        raise Forbidden("token.scope", "Revoking another token needs a session or an admin token.")
    if actor.token is not None and actor.token.owner_id is not None and token.owner_id != actor.token.owner_id:
        raise NotFound("token.not_found", "No such token.")  # beyond this token's owner: not even seen
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    audit_record(actor=actor, action="token.revoke", token=token.prefix)
    return token


def token_authenticate(*, secret: str) -> Token:
    """The live token for ``secret``, its use recorded; raises Unauthenticated with the reason's code."""
    from registry.selectors import token_get_live

    token = token_get_live(secret=secret)
    now = timezone.now()
    resolution = timedelta(seconds=settings.SKILLYARD_TOKEN_LAST_USED_RESOLUTION_SECONDS)
    if token.last_used_at is None or now - token.last_used_at > resolution:
        Token.objects.filter(id=token.id).update(last_used_at=now)
        token.last_used_at = now
    return token
