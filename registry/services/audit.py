"""The audit log: every publish, yank, deletion, token and membership change."""

from __future__ import annotations

from registry.access import Actor
from registry.models import AuditEvent


def audit_record(
    *, actor: Actor | None, action: str, owner: str = "", skill: str = "", version: str = "", **data
) -> AuditEvent:
    user = actor.account if actor is not None and actor.is_authenticated else None
    token = actor.token if actor is not None else None
    return AuditEvent.objects.create(
        action=action,
        actor=user,
        token_prefix=token.prefix if token is not None else "",
        owner=owner,
        skill=skill,
        version=version,
        data=data,
    )
