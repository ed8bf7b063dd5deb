"""Organisations and members: roles decide who may publish and who sees private skills."""

from __future__ import annotations

import pytest

from registry.models import AuditEvent, Membership
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(alice_api, make_user):
    make_user("carol")
    assert alice_api.post("/api/v1/orgs", {"name": "acme"}).status_code == 201
    return alice_api


def test_creator_becomes_owner(acme):
    body = acme.get("/api/v1/orgs/acme").json()
    created = body["members"][0]["created_at"]
    assert body["members"] == [{"username": "alice", "role": "owner", "source": "manual", "created_at": created}]


def test_members_are_listed_to_members_only(acme, bob_api):
    assert "members" not in bob_api.get("/api/v1/orgs/acme").json()
    assert bob_api.get("/api/v1/orgs/acme/members").status_code == 403


def test_publisher_member_can_publish_reader_cannot(acme, token_for, make_user):
    dave = make_user("dave")
    acme.post("/api/v1/orgs/acme/members", {"username": "carol", "role": "publisher"})
    acme.post("/api/v1/orgs/acme/members", {"username": "dave", "role": "reader"})
    from django.contrib.auth import get_user_model

    carol = get_user_model().objects.get(username="carol")
    assert Api(token_for(carol, "publish")).publish("acme-one", make_zip("acme-one"), owner="acme").status_code == 201
    response = Api(token_for(dave, "publish")).publish("acme-two", make_zip("acme-two"), owner="acme")
    assert response.status_code == 403 and response.json()["code"] == "permission.role"


def test_only_admins_manage_members(acme, bob_api):
    response = bob_api.post("/api/v1/orgs/acme/members", {"username": "bob", "role": "owner"})
    assert response.status_code == 403


def test_admin_cannot_make_owners(acme, make_user, token_for):
    erin = make_user("erin")
    acme.post("/api/v1/orgs/acme/members", {"username": "erin", "role": "admin"})
    response = Api(token_for(erin, "admin")).post("/api/v1/orgs/acme/members", {"username": "carol", "role": "owner"})
    assert response.status_code == 403


def test_last_owner_cannot_leave(acme):
    response = acme.delete("/api/v1/orgs/acme/members/alice")
    assert response.status_code == 409 and response.json()["code"] == "member.last_owner"


def test_membership_changes_are_audited(acme):
    acme.post("/api/v1/orgs/acme/members", {"username": "carol", "role": "reader"})
    assert acme.delete("/api/v1/orgs/acme/members/carol").status_code == 204
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"org.create", "member.set", "member.remove"} <= actions
    assert not Membership.objects.filter(user__username="carol", owner__name="acme").exists()


def test_unknown_role_and_user_are_refused(acme):
    assert acme.post("/api/v1/orgs/acme/members", {"username": "carol", "role": "god"}).status_code == 400
    assert acme.post("/api/v1/orgs/acme/members", {"username": "nobody", "role": "reader"}).status_code == 404


def test_anonymous_cannot_create_orgs(db):
    assert Api().post("/api/v1/orgs", {"name": "x"}).status_code == 401
