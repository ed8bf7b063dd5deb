"""Reserved and brand names (issue 34, item 7): nobody can become ``admin``, ``api`` or
``skillyard`` (nor ``Adm1n``, ``ad-min``), as a user or an organisation, on any path that creates
one; an operator's ``createsuperuser`` still may."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from registry import services
from registry.errors import Invalid
from registry.models import Owner
from registry.names import RESERVED_NAMES, name_reserved

pytestmark = pytest.mark.django_db

ISSUE_LIST = "admin root api www skillyard staff support security help about login signup settings static media"


@pytest.mark.parametrize("name", ISSUE_LIST.split())
def test_the_issues_names_are_in_the_one_list(name):
    assert name in RESERVED_NAMES and name_reserved(name)


@pytest.mark.parametrize("name", ["Admin", "ADMIN", "adm1n", "ad-min", "ad_min", "Sk1llyard", "r00t", "well.known"])
def test_look_alikes_of_reserved_names_are_reserved(name):
    assert name_reserved(name)


@pytest.mark.parametrize("name", ["alice", "acme", "skillyard-demo", "helpful", "apis", "rooted", "administered"])
def test_ordinary_names_are_not_reserved(name):
    assert not name_reserved(name)


@pytest.mark.parametrize("name", ["admin", "Adm1n", "skillyard"])
def test_user_create_refuses_a_reserved_name_and_creates_nothing(name):
    with pytest.raises(Invalid) as refused:
        services.user_create(username=name, password="plum-kettle-93")
    assert refused.value.code == "owner.name_reserved"
    assert not get_user_model().objects.exists() and not Owner.objects.exists()


@pytest.mark.parametrize("name", ["support", "Security", "api-docs"])
def test_org_create_through_the_api_refuses_a_reserved_name(alice_api, name):
    refused = alice_api.post("/api/v1/orgs", {"name": name})
    assert refused.status_code == 422 and refused.json()["code"] == "owner.name_reserved"
    assert not Owner.objects.filter(kind=Owner.Kind.ORG).exists()


def test_createsuperuser_may_still_take_a_reserved_name():
    """The operator's own account: created outside the services, its namespace made on first need."""
    call_command("createsuperuser", "--username", "admin", "--email", "admin@example.com", "--noinput")
    owner = services.user_owner_ensure(user=get_user_model().objects.get(username="admin"))
    assert owner.name == "admin" and owner.kind == Owner.Kind.USER
