"""Who may do what: the actor of a request and the role/scope checks every write uses.

Reads go through ``Skill.objects.visible_to`` (models.py); writes through :func:`require`.
Order matters and is the caller's job: check visibility first (404), then rights (403).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User

from registry.errors import Forbidden, Unauthenticated
from registry.models import Membership, Owner, Role, Token, TokenScope

# Keyed by the plain strings the database returns (a TextChoices member is equal to its value).
ROLE_RANK: dict[str, int] = {Role.READER: 1, Role.PUBLISHER: 2, Role.ADMIN: 3, Role.OWNER: 4}
SCOPE_RANK: dict[str, int] = {TokenScope.READ: 1, TokenScope.PUBLISH: 2, TokenScope.ADMIN: 3}


@dataclass(frozen=True)
class Actor:
    """A user, and the token they authenticated with (None for a browser session)."""

    user: User | AnonymousUser
    token: Token | None = None

    @classmethod
    def anonymous(cls) -> Actor:
        return cls(AnonymousUser())

    @property
    def is_authenticated(self) -> bool:
        return bool(self.user.is_authenticated)

    @property
    def account(self) -> User:
        """The signed-in user, for a write past :attr:`is_authenticated` or :func:`require`."""
        if isinstance(self.user, AnonymousUser):
            raise Unauthenticated("auth.required", "Sign in or send `Authorization: Bearer <token>`.")
        return self.user


def owner_role(*, user: User | AnonymousUser, owner: Owner) -> str | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(owner=owner, user=user).values_list("role", flat=True).first()


def require(actor: Actor, *, owner: Owner, role: Role, scope: TokenScope) -> None:
    """Raise unless the actor holds ``role`` on ``owner`` and their token allows ``scope`` there."""
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in or send `Authorization: Bearer <token>`.")
    token = actor.token
    if token is not None:
        if SCOPE_RANK[token.scope] < SCOPE_RANK[scope]:
            raise Forbidden("token.scope", f"This token's scope is {token.scope}; {scope} is needed.")
        if token.owner_id is not None and token.owner_id != owner.id:
            raise Forbidden("token.owner", f"This token is not valid for owner {owner.name}.")
    held = owner_role(user=actor.user, owner=owner)
    if held is None or ROLE_RANK[held] < ROLE_RANK[role]:
        raise Forbidden("permission.role", f"You need the {role} role on {owner.name}.")
