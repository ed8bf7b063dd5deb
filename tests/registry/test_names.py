"""Name rules (issue 3, acceptance 4): look-alikes refused; deleted names and versions never reused."""

from __future__ import annotations

import pytest

from registry.names import canonical_name, names_confusable
from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("pdf-tools", "PDF-Tools"),
        ("pdf-tools", "pdf_tools"),
        ("pdf-tools", "pdf.tools"),
        ("pdf-tools", "pdf--tools"),
        ("pdf-tools", "pdf-too1s"),
        ("pdf-tools", "pdf-tooIs"),
        ("pdf-tools", "pdf-t00ls"),
        ("mail", "maii"),
        ("mail", "ma1l"),
        ("log", "l0g"),
        ("i18n", "l18n"),
    ],
)
def test_confusable_names_share_a_canonical_form(a, b):
    assert names_confusable(a, b)


@pytest.mark.parametrize(
    ("a", "b"), [("pdf-tools", "pdftools"), ("pdf-tools", "pdf-tool"), ("abc", "abd"), ("o1", "o2")]
)
def test_distinct_names_stay_distinct(a, b):
    assert not names_confusable(a, b)


def test_canonical_form_is_documented_mapping():
    assert canonical_name("My_Cool.Skill--10") == "my-cool-sklll-lo"


@pytest.mark.parametrize("lookalike", ["pdf-too1s", "pdf-tooi-s".replace("-s", "s"), "pdf-t0ols"])
def test_publish_of_a_lookalike_by_another_owner_is_refused(alice_api, bob_api, lookalike):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    response = bob_api.publish(lookalike, make_zip(lookalike))
    assert response.status_code == 409
    assert response.json()["code"] == "name.unavailable"


def test_url_name_differing_only_by_case_is_refused(alice_api, bob_api):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    assert bob_api.publish("PDF-Tools", make_zip("pdf-tools")).status_code in (403, 422)


def test_lookalike_of_a_private_skill_is_refused_without_naming_it(alice_api, bob_api):
    assert alice_api.publish("hidden-tool", make_zip("hidden-tool"), visibility="private").status_code == 201
    response = bob_api.publish("hidden-t0ol", make_zip("hidden-t0ol"))
    assert response.status_code == 409
    assert "hidden-tool" not in response.content.decode()


def test_deleted_skill_name_is_never_reusable(alice_api, bob_api):
    assert alice_api.publish("gone", make_zip("gone")).status_code == 201
    assert alice_api.delete("/api/v1/skills/gone").status_code == 204
    assert alice_api.get("/api/v1/skills/gone").status_code == 404
    again = alice_api.publish("gone", make_zip("gone", version="2.0.0"))
    assert again.status_code == 409 and again.json()["code"] == "name.unavailable"
    assert bob_api.publish("gone", make_zip("gone")).status_code == 409
    assert bob_api.publish("g0ne", make_zip("g0ne")).status_code == 409


def test_deleted_version_is_never_reusable(alice_api):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools", version="1.1.0")).status_code == 201
    assert alice_api.delete("/api/v1/skills/pdf-tools/versions/1.0.0").status_code == 204
    assert alice_api.get("/api/v1/skills/pdf-tools/versions/1.0.0").status_code == 404
    same = alice_api.publish("pdf-tools", make_zip("pdf-tools"))
    assert same.status_code == 409 and same.json()["code"] == "version.deleted"


def test_owner_names_share_the_rule(alice_api, make_user):
    assert alice_api.post("/api/v1/orgs", {"name": "acme"}).status_code == 201
    response = alice_api.post("/api/v1/orgs", {"name": "ACME"})
    assert response.status_code == 409 and response.json()["code"] == "owner.name_taken"
    assert alice_api.post("/api/v1/orgs", {"name": "a1ice"}).status_code == 409


def test_taken_private_deleted_and_confusable_names_get_one_indistinguishable_answer(alice_api, bob_api):
    assert alice_api.publish("public-one", make_zip("public-one")).status_code == 201
    assert alice_api.publish("secret-one", make_zip("secret-one"), visibility="private").status_code == 201
    assert alice_api.publish("gone-one", make_zip("gone-one")).status_code == 201
    assert alice_api.delete("/api/v1/skills/gone-one").status_code == 204
    answers = {
        name: bob_api.publish(name, make_zip(name)) for name in ("public-one", "secret-one", "gone-one", "secret-0ne")
    }
    shapes = {
        (r.status_code, r.json()["code"], r.json()["detail"].replace(repr(n), "NAME")) for n, r in answers.items()
    }
    assert len(shapes) == 1 and next(iter(shapes))[:2] == (409, "name.unavailable")
    assert all("secret-one" not in r.content.decode() for n, r in answers.items() if n != "secret-one")
