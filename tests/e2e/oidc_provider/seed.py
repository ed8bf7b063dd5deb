"""Fill the test provider: its tables, an RSA signing key, the registry as a client, users with
groups. ``python -m tests.e2e.oidc_provider.seed '<json>'`` with the provider's environment;
run again to change a user's groups (what an administrator of the provider would do)."""

from __future__ import annotations

import json
import sys


def seed(spec: dict) -> None:
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from oidc_provider.models import Client, ResponseType, RSAKey

    call_command("migrate", "--noinput", verbosity=0)
    if not RSAKey.objects.exists():
        call_command("creatersakey")
    for spec_client in spec.get("clients", []):
        client, _ = Client.objects.update_or_create(
            client_id=spec_client["client_id"],
            defaults={
                "name": "Skillyard",
                "client_type": "confidential",
                "client_secret": spec_client["client_secret"],
                "jwt_alg": "RS256",
                "require_consent": False,
                "_redirect_uris": "\n".join(spec_client["redirect_uris"]),
                "_scope": "openid email profile groups",
            },
        )
        client.response_types.set([ResponseType.objects.get(value="code")])
    for spec_user in spec.get("users", []):
        user, _ = User.objects.get_or_create(username=spec_user["username"])
        user.email = spec_user.get("email", "")
        if not user.check_password(spec_user["password"]):
            user.set_password(spec_user["password"])  # only then: a new password ends their sessions
        user.save()
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in spec_user.get("groups", [])])


if __name__ == "__main__":
    import django

    django.setup()
    seed(json.loads(sys.argv[1]))
