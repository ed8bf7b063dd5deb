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


def test_an_orgs_page_shows_its_description_member_count_and_skill_totals(acme):
    from registry.models import Skill

    Skill.objects.filter(name="acme-public").update(downloads=3)
    Skill.objects.filter(name="acme-secret").update(downloads=40)
    services.owner_describe(
        actor=Actor(selectors.owner_get(name="alice").user),
        owner=selectors.owner_get(name="acme"),
        description="Tools  for\nACME.",
    )
    outside = Client().get("/owners/acme").content.decode()
    assert '<p class="owner-description">Tools for ACME.</p>' in outside
    assert "<strong>2</strong> members" in outside  # alice and bob; who they are stays private
    assert "<strong>1</strong> skill</li>" in outside and "<strong>3</strong> downloads in all" in outside
    inside = client_of("bob").get("/owners/acme").content.decode()
    assert "<strong>2</strong> skills</li>" in inside and "<strong>43</strong> downloads in all" in inside


def test_admins_describe_their_owner_and_others_may_not(acme):
    alice = Client()
    assert alice.login(username="alice", password="pw-alice-123")
    assert 'name="description"' in alice.get("/owners/acme").content.decode()
    saved = alice.post("/owners/acme/description", {"description": "We make tools."}, follow=True)
    assert (
        "We make tools." in saved.content.decode() and '<li role="status">Description saved.' in saved.content.decode()
    )
    bob = client_of("bob")  # a reader
    assert 'name="description"' not in bob.get("/owners/acme").content.decode()
    assert bob.post("/owners/acme/description", {"description": "defaced"}).status_code == 403
    assert selectors.owner_get(name="acme").description == "We make tools."
    too_long = alice.post("/owners/acme/description", {"description": "x" * 501})
    assert too_long.status_code == 422 and b"owner.description_too_long" in too_long.content


def test_the_publishers_index_counts_only_what_the_viewer_may_see(acme, publish):
    from registry.models import Skill

    publish("solo-tool")  # alice's own
    Skill.objects.filter(name="acme-secret").update(downloads=40)
    Skill.objects.filter(name="solo-tool").update(downloads=5)
    outside = Client().get("/publishers").content.decode()
    assert outside.index("/owners/alice") < outside.index("/owners/acme")  # 5 downloads before 0
    assert "1 skill · 0 downloads" in outside and "acme-secret" not in outside
    inside = client_of("bob").get("/publishers").content.decode()
    assert inside.index("/owners/acme") < inside.index("/owners/alice")  # its private skill counts for bob
    assert "2 skills · 40 downloads" in inside


def test_a_membership_from_single_sign_on_is_marked_and_its_admin_told_where_to_change_it(acme, alice):
    from registry.models import Membership, MembershipSource

    Membership.objects.filter(user__username="bob").update(source=MembershipSource.SSO)
    alice.set_password("pw-alice-123")
    alice.save()
    page = client_of("alice").get("/owners/acme").content.decode()
    assert "reader · via single sign-on" in page
    assert "restored at their next sign-in" in page  # the admin's form says where roles are decided
    assert "via single sign-on" in client_of("bob").get("/owners/acme").content.decode()
    Membership.objects.filter(user__username="bob").update(source=MembershipSource.MANUAL)
    page = client_of("alice").get("/owners/acme").content.decode()
    assert "via single sign-on" not in page and "restored at their next sign-in" not in page
