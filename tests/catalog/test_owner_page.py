"""An owner's page: its skills, and an organisation's private ones for members only."""

from __future__ import annotations

import pytest
from django.test import Client

from registry import selectors, services
from registry.access import Actor


@pytest.fixture
def acme(alice, publish):
    """acme (alice owns it, bob reads), with a public and a private skill; carol is outside."""
    services.org_create(actor=Actor(alice), name="acme")
    for username in ("bob", "carol"):
        user = services.user_create(username=username)
        user.set_password(f"pw-{username}-123")
        user.save()
    services.org_member_set(actor=Actor(alice), org=selectors.owner_get(name="acme"), username="bob", role="reader")
    publish("acme-public", owner="acme")
    publish("acme-secret", owner="acme", visibility="private")


def client_of(username: str) -> Client:
    browser = Client()
    assert browser.login(username=username, password=f"pw-{username}-123")
    return browser


def test_members_see_an_orgs_private_skills_on_its_page_and_theirs(acme):
    bob = client_of("bob")
    page = bob.get("/owners/acme").content.decode()
    assert "acme-public" in page and "acme-secret" in page and "private" in page
    assert bob.get("/skills/acme-secret").status_code == 200


@pytest.mark.parametrize("who", ["carol", None])
def test_an_orgs_private_skill_is_404_to_non_members_and_anonymous(acme, who):
    browser = client_of(who) if who else Client()
    page = browser.get("/owners/acme").content.decode()
    assert "acme-public" in page and "acme-secret" not in page
    for path in ("/skills/acme-secret", "/skills/acme-secret/versions/1.0.0", "/skills/acme-secret/badge.svg"):
        assert browser.get(path).status_code == 404, path
    assert "acme-secret" not in browser.get("/skills", {"q": "acme"}).content.decode()
    assert "acme-secret" not in browser.get("/").content.decode()


def test_an_unknown_owner_is_404(db):
    assert Client().get("/owners/nobody").status_code == 404
