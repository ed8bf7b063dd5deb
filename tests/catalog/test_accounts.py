"""Sign-up on the catalog: open or closed by SKILLYARD_SIGNUP, throttled, CSRF-checked."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from registry.models import Owner

GOOD = {"username": "carol", "password1": "plum-kettle-93", "password2": "plum-kettle-93"}


@pytest.fixture
def signup_open(settings):
    settings.SKILLYARD_SIGNUP = "open"


@pytest.mark.django_db
def test_closed_signup_is_404_and_the_login_page_does_not_offer_it(settings):
    assert settings.SKILLYARD_SIGNUP == "closed"  # the default
    assert Client().get("/accounts/signup/").status_code == 404
    assert Client().post("/accounts/signup/", GOOD).status_code == 404
    assert not get_user_model().objects.filter(username="carol").exists()
    login = Client().get("/accounts/login/").content.decode()
    assert "/accounts/signup/" not in login and "Sign up" not in login


@pytest.mark.django_db
def test_open_signup_creates_the_user_and_namespace_signs_in_and_goes_where_they_were_going(signup_open):
    login = Client().get("/accounts/login/", {"next": "/publish"}).content.decode()
    assert 'href="/accounts/signup/?next=/publish"' in login
    browser = Client()
    form = browser.get("/accounts/signup/", {"next": "/publish"})
    assert form.status_code == 200 and "csrfmiddlewaretoken" in form.content.decode()
    done = browser.post("/accounts/signup/", {**GOOD, "next": "/publish"})
    assert done.status_code == 302 and done["Location"] == "/publish"
    assert browser.get("/publish").status_code == 200  # signed in
    assert Owner.objects.get(name="carol").kind == Owner.Kind.USER
    assert Client().login(username="carol", password="plum-kettle-93")


@pytest.mark.django_db
def test_signup_never_redirects_off_site(signup_open):
    done = Client().post("/accounts/signup/", {**GOOD, "next": "https://evil.example/"})
    assert done.status_code == 302 and done["Location"] == "/"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"username": "carol@home"}, "owner.name_invalid"),  # Django allows '@'; namespaces do not
        ({"username": "Adm1n"}, "owner.name_reserved"),  # reserved, look-alikes too (issue 34)
        ({"password1": "12345678", "password2": "12345678"}, "entirely numeric"),
        ({"password2": "other-kettle-93"}, "didn"),  # the two passwords didn’t match
    ],
)
def test_refused_signup_says_why_and_creates_nothing(signup_open, fields, shown):
    page = Client().post("/accounts/signup/", {**GOOD, **fields})
    assert page.status_code == 422 and shown in page.content.decode()
    assert not get_user_model().objects.exists() and not Owner.objects.exists()


@pytest.mark.django_db
def test_signup_of_a_taken_name_is_refused(signup_open, alice):
    page = Client().post("/accounts/signup/", {**GOOD, "username": "Alice"})
    assert page.status_code == 422 and get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_signup_attempts_are_throttled_per_address(signup_open, settings):
    settings.SKILLYARD_THROTTLE_SIGNUP = "2/hour"
    for n in range(2):
        assert Client().post("/accounts/signup/", {**GOOD, "username": f"user{n}"}).status_code == 302
    refused = Client().post("/accounts/signup/", {**GOOD, "username": "user3"})
    assert refused.status_code == 429 and "Too many sign-ups" in refused.content.decode()
    assert not get_user_model().objects.filter(username="user3").exists()


@pytest.mark.django_db
def test_signup_needs_csrf(signup_open):
    assert Client(enforce_csrf_checks=True).post("/accounts/signup/", GOOD).status_code == 403


@pytest.mark.django_db
def test_signup_lands_with_a_welcome(signup_open):
    browser = Client()
    done = browser.post("/accounts/signup/", {**GOOD, "next": "/skills"}, follow=True)
    assert done.redirect_chain[-1][0] == "/skills"
    assert '<li role="status">Welcome, carol: your account is ready' in done.content.decode()
