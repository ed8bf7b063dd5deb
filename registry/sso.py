"""Single sign-on: verified OpenID Connect claims → a user and their organisation memberships.

The catalog's OpenID Connect client (catalog/sso.py) checks the provider's answer (state, nonce,
PKCE, the ID token's RS256 signature by the issuer's keys, its issuer and audience) and hands the
claims here; nothing here speaks HTTP. The rules, as docs/sso.md states them for operators:

- A person is named for good by the issuer and the ``sub`` claim (:class:`SsoIdentity`), never by
  an email or a username, which a provider may give to someone else later.
- A new user's name is ``preferred_username`` (else the email's local part, else ``user-`` and a
  digest of ``sub``), normalised to the owner-name rules (lower case, ASCII letters, digits, ``.``,
  ``_``, ``-``). A reserved name is refused (``sso.name_reserved``); a name taken by another
  account gets ``-2``, ``-3``, ... (an existing local account is never taken over). The name then
  stays, even if the provider's username changes: it is the user's namespace.
- Each group ``<prefix>:<org>:<role>`` (prefix ``skillyard`` by default; role owner, admin,
  publisher or reader; the highest wins when several name one org) makes the user a member of the
  organisation ``<org>``, created when missing. Other groups are ignored.
- Memberships made so (source ``sso``) are re-synced at every sign-in: added, role changed, removed
  when the group goes. Memberships added by hand (source ``manual``) are never touched.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from registry.access import ROLE_RANK
from registry.errors import Invalid, RegistryError
from registry.models import Membership, MembershipSource, Owner, Role, SsoIdentity
from registry.names import canonical_name, name_reserved
from registry.services.accounts import OWNER_NAME, _name_not_reserved, _owner_create, user_create
from registry.services.audit import audit_record

log = logging.getLogger(__name__)

# Owner names are at most 64 characters: a base name keeps room for a "-NNN" collision suffix.
MAX_BASE_NAME = 60
# Names tried for one person before giving up (sso.name_exhausted): a hundred people sharing one
# preferred username is a provider misconfiguration, not a crowd to number.
MAX_NAME_SUFFIX = 100
_NOT_NAME = re.compile(r"[^a-z0-9._-]+")
_DASHES = re.compile(r"-{2,}")


def sso_username_base(claims: Mapping[str, object]) -> str:
    """The owner name a new user's claims ask for, before reserved names and collisions."""
    for raw in (_text(claims, "preferred_username"), _text(claims, "email").partition("@")[0]):
        if name := _owner_name_from(raw):
            return name
    return "user-" + hashlib.sha256(_text(claims, "sub").encode()).hexdigest()[:10]


def _owner_name_from(raw: str) -> str:
    """Lower case ASCII under the owner-name rules: accents dropped, anything else becomes '-'."""
    ascii_text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode().lower()
    name = _DASHES.sub("-", _NOT_NAME.sub("-", ascii_text)).strip("-._")
    return name[:MAX_BASE_NAME].rstrip("-._")


def _text(claims: Mapping[str, object], key: str) -> str:
    value = claims.get(key)
    return value.strip() if isinstance(value, str) else ""


def sso_roles_from_groups(groups: object, *, prefix: str) -> dict[str, Role]:
    """``{org: role}`` from a groups claim (a list, or one string); the highest role per org."""
    wanted: dict[str, Role] = {}
    listed = [groups] if isinstance(groups, str) else groups if isinstance(groups, list) else []
    for group in listed:
        parsed = _group_role(group, prefix=prefix)
        if parsed is not None:
            org, role = parsed
            if org not in wanted or ROLE_RANK[role] > ROLE_RANK[wanted[org]]:
                wanted[org] = role
    return wanted


def _group_role(group: object, *, prefix: str) -> tuple[str, Role] | None:
    if not isinstance(group, str) or not group.startswith(f"{prefix}:"):
        return None
    org, _, role = group[len(prefix) + 1 :].rpartition(":")
    if not OWNER_NAME.match(org) or role.lower() not in ROLE_RANK:
        return None
    return org, Role(role.lower())


@transaction.atomic
def sso_sign_in(*, issuer: str, claims: Mapping[str, object], groups_claim: str, group_prefix: str) -> User:
    """The user these verified claims name (created at first sign-in), memberships re-synced."""
    subject = _text(claims, "sub")
    if not subject:
        raise Invalid("sso.subject_missing", "The provider's answer names nobody (no 'sub' claim).")
    identity = SsoIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    if identity is None:
        identity = SsoIdentity(issuer=issuer, subject=subject, user=_user_create_named(claims))
    identity.last_sign_in_at = timezone.now()
    identity.save()
    user = identity.user
    if (email := _text(claims, "email")) and email != user.email:
        user.email = email
        user.save(update_fields=["email"])
    sso_memberships_sync(user=user, wanted=sso_roles_from_groups(claims.get(groups_claim), prefix=group_prefix))
    return user


def _user_create_named(claims: Mapping[str, object]) -> User:
    base = sso_username_base(claims)
    if name_reserved(base):
        raise Invalid(
            "sso.name_reserved",
            f"Your username {base!r} is reserved by this registry; ask your sign-in provider's "
            "administrator for another.",
        )
    for name in [base, *(f"{base}-{n}" for n in range(2, MAX_NAME_SUFFIX + 1))]:
        if _name_free(name):
            try:
                with transaction.atomic():
                    user = user_create(username=name)
            except (RegistryError, IntegrityError):
                continue  # taken between the look and the write: try the next
            audit_record(actor=None, action="user.create", owner=name, source="sso")
            return user
    raise Invalid("sso.name_exhausted", f"Every name from {base!r} to {base}-{MAX_NAME_SUFFIX} is taken.")


def _name_free(name: str) -> bool:
    taken_user = User.objects.filter(username__iexact=name).exists()
    return not taken_user and not Owner.objects.filter(canonical_name=canonical_name(name)).exists()


def sso_memberships_sync(*, user: User, wanted: dict[str, Role]) -> None:
    """Make the user's ``sso`` memberships exactly ``wanted``; ``manual`` ones stay as they are."""
    targets = {org.id: (org, role) for name, role in wanted.items() if (org := _org_for_group(name)) is not None}
    for membership in Membership.objects.filter(user=user).select_related("owner"):
        target = targets.pop(membership.owner_id, None)
        if membership.source != MembershipSource.SSO:
            continue  # added by hand: single sign-on leaves it alone
        if target is None:
            membership.delete()
            _audit(action="member.remove", user=user, org=membership.owner)
        elif membership.role != target[1]:
            membership.role = target[1]
            membership.save(update_fields=["role"])
            _audit(action="member.set", user=user, org=membership.owner, role=target[1])
    for org, role in targets.values():
        Membership.objects.create(owner=org, user=user, role=role, source=MembershipSource.SSO)
        _audit(action="member.set", user=user, org=org, role=role)


def _audit(*, action: str, user: User, org: Owner, **data: str) -> None:
    audit_record(actor=None, action=action, owner=org.name, username=user.username, source="sso", **data)


def _org_for_group(name: str) -> Owner | None:
    """The organisation a group names, created when missing; None (logged) when the name is a
    user's namespace, reserved, or too like another owner's."""
    owner = Owner.objects.filter(name__iexact=name).first()
    if owner is None:
        try:
            _name_not_reserved(name)
            with transaction.atomic():
                owner = _owner_create(name=name, kind=Owner.Kind.ORG)
            audit_record(actor=None, action="org.create", owner=owner.name, source="sso")
        except RegistryError as exc:
            log.warning("single sign-on: group names organisation %r: %s", name, exc)
            return None
    if owner.kind != Owner.Kind.ORG:
        log.warning("single sign-on: group names %r, a user's namespace, not an organisation", name)
        return None
    return owner
