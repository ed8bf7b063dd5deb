"""``manage.py seed_demo``: the demo organisation describes itself once; an edit is kept."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from registry.models import Owner, Skill

pytestmark = pytest.mark.django_db


def test_the_demo_org_is_described_once_and_a_later_edit_stays(capsys):
    call_command("seed_demo")
    org = Owner.objects.get(name="skillyard-demo")
    assert org.description and Skill.objects.filter(owner=org).count() == 3
    Owner.objects.filter(id=org.id).update(description="Ours now.")
    call_command("seed_demo")
    assert Owner.objects.get(id=org.id).description == "Ours now."
    assert "already published" in capsys.readouterr().out
