"""Token scopes, owners, expiry and revocation (issue 3, acceptance 3)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from registry.models import AuditEvent, Token
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db


def test_token_is_shown_once_and_stored_hashed(alice):
    api = Api(user=alice)
    response = api.post("/api/v1/tokens", {"scope": "publish", "name": "ci"})
    assert response.status_code == 201
    secret = response.json()["token"]
    assert secret.startswith("sky_") and len(secret) > 40
    stored = Token.objects.get(id=response.json()["id"])
    assert secret not in (stored.digest, stored.prefix) and len(stored.digest) == 64
    assert all("token" not in t for t in api.get("/api/v1/tokens").json())
    assert AuditEvent.objects.filter(action="token.create").exists()


def test_read_token_cannot_publish(alice, token_for):
    response = Api(token_for(alice, "read")).publish("pdf-tools", make_zip("pdf-tools"))
    assert response.status_code == 403
    assert response.json()["code"] == "token.scope"


def test_publish_token_for_one_owner_cannot_publish_to_another(alice, token_for):
    Api(user=alice).post("/api/v1/orgs", {"name": "acme"})
    personal_only = Api(token_for(alice, "publish", owner="alice"))
    response = personal_only.publish("acme-skill", make_zip("acme-skill"), owner="acme")
    assert response.status_code == 403
    assert response.json()["code"] == "token.owner"
    assert personal_only.publish("mine", make_zip("mine")).status_code == 201


def test_token_scoped_to_an_org_publishes_there_by_default(alice, token_for):
    Api(user=alice).post("/api/v1/orgs", {"name": "acme"})
    response = Api(token_for(alice, "publish", owner="acme")).publish("acme-skill", make_zip("acme-skill"))
    assert response.status_code == 201
    assert Api(user=alice).get("/api/v1/skills/acme-skill").json()["owner"] == "acme"


def test_expired_token_is_refused(alice, token_for):
    secret = token_for(alice, "publish")
    Token.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Api(secret).get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "token.expired"


def test_revoked_token_is_refused(alice):
    session = Api(user=alice)
    created = session.post("/api/v1/tokens", {"scope": "publish"}).json()
    assert session.delete(f"/api/v1/tokens/{created['id']}").status_code == 204
    response = Api(created["token"]).publish("pdf-tools", make_zip("pdf-tools"))
    assert response.status_code == 401
    assert response.json()["code"] == "token.revoked"
    assert AuditEvent.objects.filter(action="token.revoke").exists()


def test_unknown_token_is_refused(db):
    response = Api("sky_not-a-real-token").get("/api/v1/skills")
    assert response.status_code == 401
    assert response.json()["code"] == "token.invalid"


def test_token_records_last_use(alice, token_for):
    secret = token_for(alice, "read")
    Api(secret).get("/api/v1/me")
    assert Token.objects.get().last_used_at is not None


def test_non_admin_token_cannot_mint_tokens(alice, token_for):
    response = Api(token_for(alice, "publish")).post("/api/v1/tokens", {"scope": "admin"})
    assert response.status_code == 403


def test_owner_scoped_admin_token_cannot_mint_for_everything(alice, token_for):
    api = Api(token_for(alice, "admin", owner="alice"))
    assert api.post("/api/v1/tokens", {"scope": "read"}).status_code == 403
    assert api.post("/api/v1/tokens", {"scope": "read", "owner": "alice"}).status_code == 201


def test_cannot_revoke_someone_elses_token(alice, bob, token_for):
    token_for(alice, "read")
    response = Api(user=bob).delete(f"/api/v1/tokens/{Token.objects.get().id}")
    assert response.status_code == 404


def test_me_describes_the_caller(alice, token_for):
    body = Api(token_for(alice, "read")).get("/api/v1/me").json()
    assert body["username"] == "alice"
    assert body["owners"] == [{"owner": "alice", "kind": "user", "role": "owner"}]
    assert body["token"]["scope"] == "read"
    assert Api().get("/api/v1/me").status_code == 401


def test_issue_token_command_prints_the_token_last(alice, capsys):
    from django.core.management import call_command

    call_command("issue_token", "alice", "--scope", "publish", "--owner", "alice", "--expires-days", "7")
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    assert secret.startswith("sky_")
    token = Token.objects.get()
    assert token.scope == "publish" and token.owner.name == "alice"
    assert Api(secret).publish("cli-skill", make_zip("cli-skill")).status_code == 201


def test_issue_token_replace_revokes_live_tokens_of_that_name_only(alice, capsys):
    from django.core.management import call_command

    def issue(*extra):
        call_command("issue_token", "alice", "--name", "make run", *extra)
        return capsys.readouterr().out.strip().splitlines()[-1]

    first = issue()
    call_command("issue_token", "alice", "--name", "ci")
    second = issue("--replace")
    live = Token.objects.filter(revoked_at__isnull=True)
    assert sorted(live.values_list("name", flat=True)) == ["ci", "make run"]
    assert Api(first).get("/api/v1/me").status_code == 401
    assert Api(second).get("/api/v1/me").status_code == 200


def test_issue_token_create_user_with_a_reserved_name_is_a_command_error(db):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="owner.name_reserved"):
        call_command("issue_token", "admin", "--create-user")


def test_issue_token_keep_prints_the_saved_token_while_it_works(alice, capsys, tmp_path):
    from django.core.management import call_command

    kept = tmp_path / "data" / "demo-token"

    def issue():
        call_command("issue_token", "alice", "--name", "make run", "--keep", str(kept))
        return capsys.readouterr().out.strip().splitlines()[-1]

    first = issue()
    assert kept.read_text().strip() == first and kept.stat().st_mode & 0o777 == 0o600
    assert issue() == first and Token.objects.count() == 1  # a restart: the same token, still live
    assert Api(first).get("/api/v1/me").status_code == 200
    Token.objects.update(revoked_at=timezone.now())  # the user revoked it: a new one is issued
    second = issue()
    assert second != first and kept.read_text().strip() == second
    assert Api(second).get("/api/v1/me").status_code == 200
