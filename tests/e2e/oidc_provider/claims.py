"""The provider's claims: the standard profile from the Django user, and a `groups` scope."""

from __future__ import annotations

from oidc_provider.lib.claims import ScopeClaims


def userinfo(claims: dict, user) -> dict:  # noqa: ANN001
    claims["preferred_username"] = user.username
    claims["name"] = user.get_full_name() or user.username
    claims["email"] = user.email
    claims["email_verified"] = True
    return claims


class GroupsScopeClaims(ScopeClaims):
    info_groups = ("Groups", "The groups you are in.")

    def scope_groups(self) -> dict:
        return {"groups": sorted(self.user.groups.values_list("name", flat=True))}
