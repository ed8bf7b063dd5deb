"""Single sign-on's mapping rule (registry/sso.py): claims → user, groups → memberships.

The OpenID Connect exchange itself is tested in Chromium against a real provider
(tests/e2e/test_sso_browser.py); these tests pin the rule docs/sso.md states.
"""

from __future__ import annotations

import pytest

from registry.errors import Invalid
from registry.models import AuditEvent, Membership, MembershipSource, Owner, Role, SsoIdentity
from registry.sso import sso_roles_from_groups, sso_sign_in, sso_username_base

ISSUER = "https://id.example.test/openid"


def sign_in(sub: str = "s-1", *, groups: object = (), **claims):
    claims = {"sub": sub, "preferred_username": "alice", "email": "alice@example.test", **claims}
    if groups != ():
        claims["groups"] = groups
    return sso_sign_in(issuer=ISSUER, claims=claims, groups_claim="groups", group_prefix="skillyard")


def roles(user) -> dict[str, tuple[str, str]]:
    return {m.owner.name: (m.role, m.source) for m in Membership.objects.filter(user=user).select_related("owner")}


# --- the rule, pure ---------------------------------------------------------------------------


def test_groups_with_the_prefix_map_to_org_roles_and_others_are_ignored():
    groups = ["skillyard:acme:publisher", "skillyard:beta:reader", "staff", "other:acme:owner", "skillyard:x:boss"]
    assert sso_roles_from_groups(groups, prefix="skillyard") == {"acme": Role.PUBLISHER, "beta": Role.READER}


def test_the_highest_role_wins_when_groups_name_one_org_twice():
    groups = ["skillyard:acme:reader", "skillyard:acme:admin", "skillyard:acme:publisher"]
    assert sso_roles_from_groups(groups, prefix="skillyard") == {"acme": Role.ADMIN}


def test_a_configured_prefix_with_a_colon_and_a_role_in_capitals():
    assert sso_roles_from_groups(["corp:skills:acme:Owner"], prefix="corp:skills") == {"acme": Role.OWNER}


@pytest.mark.parametrize(
    "claim", [None, 42, {"skillyard:acme:reader": True}, ["skillyard::reader"], ["skillyard:a b:reader"]]
)
def test_a_missing_or_malformed_groups_claim_gives_no_membership(claim):
    assert sso_roles_from_groups(claim, prefix="skillyard") == {}


def test_a_single_group_given_as_a_string_counts():
    assert sso_roles_from_groups("skillyard:acme:reader", prefix="skillyard") == {"acme": Role.READER}


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"preferred_username": "Alice.Smith"}, "alice.smith"),
        ({"preferred_username": "José Núñez"}, "jose-nunez"),
        ({"preferred_username": "bob@example.test"}, "bob-example.test"),
        ({"preferred_username": "--x--"}, "x"),
        ({"preferred_username": "田中", "email": "tanaka@example.test"}, "tanaka"),
        ({"preferred_username": "a" * 80}, "a" * 60),
    ],
)
def test_usernames_are_normalised_to_owner_name_rules(claims, expected):
    assert sso_username_base({"sub": "s", **claims}) == expected


def test_without_any_usable_name_the_subject_gives_one():
    name = sso_username_base({"sub": "0f3a-77"})
    assert name.startswith("user-") and name == sso_username_base({"sub": "0f3a-77", "preferred_username": "田中"})


# --- the service, on the database -------------------------------------------------------------


@pytest.mark.django_db
def test_first_sign_in_creates_the_user_namespace_identity_and_memberships():
    user = sign_in(groups=["skillyard:acme:publisher"])
    assert user.username == "alice" and user.email == "alice@example.test" and not user.has_usable_password()
    assert SsoIdentity.objects.get(issuer=ISSUER, subject="s-1").user == user
    assert roles(user) == {"alice": ("owner", "manual"), "acme": ("publisher", "sso")}
    assert Owner.objects.get(name="acme").kind == Owner.Kind.ORG
    assert AuditEvent.objects.filter(action="member.set", owner="acme", data__source="sso").exists()


@pytest.mark.django_db
def test_the_subject_not_the_username_names_the_user_at_the_next_sign_in():
    first = sign_in(groups=[])
    again = sign_in(preferred_username="alice-renamed", email="new@example.test")
    assert again.pk == first.pk and again.username == "alice" and again.email == "new@example.test"


@pytest.mark.django_db
def test_a_taken_name_gets_a_number_and_the_local_account_is_not_taken_over(make_user):
    local = make_user("alice")
    other = sign_in("s-1")
    third = sign_in("s-2")
    assert (other.username, third.username) == ("alice-2", "alice-3")
    assert not SsoIdentity.objects.filter(user=local).exists()


@pytest.mark.django_db
def test_a_name_too_like_another_owner_counts_as_taken(make_user):
    make_user("al1ce")  # a look-alike of alice (DESIGN §5)
    assert sign_in().username == "alice-2"


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["admin", "Adm1n", "support"])
def test_a_reserved_username_is_refused(username):
    with pytest.raises(Invalid) as refused:
        sign_in(preferred_username=username)
    assert refused.value.code == "sso.name_reserved"
    assert not SsoIdentity.objects.exists()


@pytest.mark.django_db
def test_no_subject_is_refused():
    with pytest.raises(Invalid) as refused:
        sso_sign_in(issuer=ISSUER, claims={"preferred_username": "x"}, groups_claim="groups", group_prefix="skillyard")
    assert refused.value.code == "sso.subject_missing"


@pytest.mark.django_db
def test_sso_memberships_follow_the_groups_at_each_sign_in():
    user = sign_in(groups=["skillyard:acme:reader", "skillyard:beta:publisher"])
    sign_in(groups=["skillyard:acme:admin"])
    assert roles(user) == {"alice": ("owner", "manual"), "acme": ("admin", "sso")}
    assert AuditEvent.objects.filter(action="member.remove", owner="beta", data__source="sso").exists()
    sign_in(groups=[])
    assert roles(user) == {"alice": ("owner", "manual")}


@pytest.mark.django_db
def test_memberships_added_by_hand_are_left_alone():
    user = sign_in(groups=[])
    org = Owner.objects.create(name="gamma", canonical_name="gamma", kind=Owner.Kind.ORG)
    Membership.objects.create(owner=org, user=user, role=Role.READER, source=MembershipSource.MANUAL)
    sign_in(groups=["skillyard:gamma:owner"])
    assert roles(user)["gamma"] == ("reader", "manual")
    sign_in(groups=[])
    assert roles(user)["gamma"] == ("reader", "manual")


@pytest.mark.django_db
def test_a_group_naming_a_user_namespace_or_a_reserved_name_gives_nothing(make_user):
    make_user("carol")
    user = sign_in(groups=["skillyard:carol:owner", "skillyard:admin:owner"])
    assert roles(user) == {"alice": ("owner", "manual")}
    assert not Owner.objects.filter(name="admin").exists()


@pytest.mark.django_db
def test_an_existing_org_is_joined_whatever_the_case_in_the_group():
    org = Owner.objects.create(name="Acme", canonical_name="acme", kind=Owner.Kind.ORG)
    user = sign_in(groups=["skillyard:acme:reader"])
    assert Membership.objects.get(user=user, owner=org).role == "reader"


@pytest.mark.django_db
def test_the_members_api_says_which_memberships_follow_single_sign_on(token_for):
    from tests.registry.conftest import Api

    user = sign_in(groups=["skillyard:acme:admin"])
    members = Api(token_for(user, "admin")).get("/api/v1/orgs/acme/members").json()
    assert [(m["username"], m["role"], m["source"]) for m in members] == [(user.username, "admin", "sso")]
