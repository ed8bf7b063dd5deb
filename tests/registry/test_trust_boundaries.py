"""Trust boundaries the outside audit crossed: forged X-Forwarded-For (throttles, download
counts), guessing tokens and passwords, and tokens limited to one owner reading beyond it."""

from __future__ import annotations

import pytest
from django.test import Client

from registry import services
from registry.access import Actor
from registry.models import SkillVersion
from tests.registry.conftest import Api, make_zip


@pytest.fixture
def anon_limit(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "anon": "5/min"},
    }


def get(path: str, **headers):
    return Api().client.get(path, **headers)


def test_forged_forwarded_for_does_not_buy_new_throttle_identities(anon_limit, db):
    statuses = [get("/api/v1/skills", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(10)]
    assert statuses[:5] == [200] * 5 and set(statuses[5:]) == {429}


def test_forwarded_for_from_a_trusted_proxy_names_the_client(anon_limit, settings, db):
    settings.SKILLYARD_TRUSTED_PROXIES = ["127.0.0.0/8"]  # the test client's REMOTE_ADDR
    statuses = [get("/api/v1/skills", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(10)]
    assert set(statuses) == {200}  # ten clients behind the proxy, one request each
    # A client writing its own X-Forwarded-For is still one client: the proxy appends the real one.
    forged = [get("/api/v1/skills", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}, 203.0.113.77").status_code for i in range(7)]
    assert forged[:5] == [200] * 5 and set(forged[5:]) == {429}


def test_a_download_counts_once_per_client_however_often_and_whatever_it_claims(alice_api, db):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    for i in range(5):
        assert get("/api/v1/skills/pdf-tools/download", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code == 200
    assert alice_api.get("/api/v1/skills/pdf-tools/download").status_code == 200
    assert alice_api.get("/api/v1/skills/pdf-tools/download").status_code == 200
    assert SkillVersion.objects.get(skill__name="pdf-tools").downloads == 2  # one address, one user


def test_the_same_client_counts_again_once_the_hour_has_passed(alice_api, settings, monkeypatch, db):
    import time

    assert settings.SKILLYARD_DOWNLOAD_COUNT_WINDOW_SECONDS == 3600  # the default: once an hour
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    real_time = time.time
    for offset in (0, 60, 3500, 3601, 3660):  # the cache's clock: the window is its expiry
        monkeypatch.setattr(time, "time", lambda offset=offset: real_time() + offset)
        assert get("/api/v1/skills/pdf-tools/download").status_code == 200
    assert SkillVersion.objects.get(skill__name="pdf-tools").downloads == 2  # at 0 and at 3601


def test_bad_tokens_are_throttled_per_address(settings, db):
    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    statuses = [Api("sky_wrong_" + str(i)).get("/api/v1/me").status_code for i in range(5)]
    assert statuses[:3] == [401] * 3 and set(statuses[3:]) == {429}


@pytest.mark.parametrize("path", ["/admin/login/", "/accounts/login/"])
def test_password_guessing_is_stopped_even_for_the_right_password(path, settings, db):
    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    for username in ("carol", "dave"):
        user = services.user_create(username=username)
        user.set_password("correct horse battery")
        user.is_staff = True
        user.save()
    browser = Client()
    signed_in = Client()  # the form signs people in at all: a refusal below is the throttle's
    assert signed_in.post(path, {"username": "dave", "password": "correct horse battery"}).status_code == 302
    assert "_auth_user_id" in signed_in.session
    for _ in range(3):
        browser.post(path, {"username": "carol", "password": "wrong"})
    response = browser.post(path, {"username": "carol", "password": "correct horse battery"})
    assert response.status_code == 200 and "_auth_user_id" not in browser.session  # still refused
    other = Client(REMOTE_ADDR="192.0.2.9")  # carol elsewhere: not locked out (test_auth_lockouts.py)
    other.post(path, {"username": "carol", "password": "correct horse battery"})
    assert "_auth_user_id" in other.session


def test_a_token_limited_to_one_owner_reads_nothing_beyond_it(alice, bob, token_for, db):
    services.org_create(actor=Actor(alice), name="acme")
    other = services.org_create(actor=Actor(alice), name="other-org")
    services.org_member_set(actor=Actor(alice), org=other, username="bob", role="reader")
    limited = Api(token_for(alice, "admin", owner="acme"))
    wide_secret = token_for(alice, "admin")
    assert limited.get("/api/v1/orgs/acme/members").status_code == 200
    assert limited.get("/api/v1/orgs/other-org/members").status_code == 403
    assert "members" not in limited.get("/api/v1/orgs/other-org").json()
    listed = limited.get("/api/v1/tokens").json()
    assert listed and {t.get("owner") for t in listed} == {"acme"}
    wide = next(t for t in Api(wide_secret).get("/api/v1/tokens").json() if t.get("owner") is None)
    assert limited.delete(f"/api/v1/tokens/{wide['id']}").status_code == 404
    assert Api(wide_secret).get("/api/v1/me").status_code == 200  # not revoked


def test_failures_just_before_a_window_boundary_still_count_just_after_it(settings, monkeypatch):
    """A fixed window forgot every failure at its boundary (twice the rate around it, and this
    suite's throttle tests flaked when a minute turned mid-test); the window slides."""
    from django.core.cache import cache

    from registry import auth_limits

    cache.clear()
    now = {"t": 1_000_000 * 60 + 59.9}  # 0.1 s before a minute turns
    monkeypatch.setattr(auth_limits.time, "time", lambda: now["t"])
    for _ in range(3):
        auth_limits.record_failure("ip:203.0.113.9", rate="3/min")
    assert auth_limits.blocked("ip:203.0.113.9", rate="3/min")
    now["t"] += 0.2  # the next minute
    assert auth_limits.blocked("ip:203.0.113.9", rate="3/min")
    now["t"] += 45  # three quarters of the way through it: the old failures weigh a quarter
    assert auth_limits.blocked("ip:203.0.113.9", rate="3/min") is None
    auth_limits.record_failure("ip:203.0.113.9", rate="3/min")
    auth_limits.record_failure("ip:203.0.113.9", rate="3/min")
    assert auth_limits.blocked("ip:203.0.113.9", rate="3/min")  # 2 now + ceil(3 x .25) = 3
