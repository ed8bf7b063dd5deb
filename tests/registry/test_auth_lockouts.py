"""Auth limits that stop guessing without locking out innocent users (issue 34, item 6): a valid
token is never refused by the bad-token counter, and failed sign-ins lock an account only for
the address that failed (per account and address), while one address still cannot spray guesses
over many accounts (per address)."""

from __future__ import annotations

import pytest
from django.test import Client

from registry import services
from tests.registry.conftest import Api

PASSWORD = "correct horse battery"
SIGN_IN_PATHS = ["/admin/login/", "/accounts/login/"]


@pytest.fixture
def people(db):
    for username in ("carol", "dave", "erin", "frank"):
        user = services.user_create(username=username)
        user.set_password(PASSWORD)
        user.is_staff = True  # the admin's sign-in takes staff only
        user.save()


def sign_in(path: str, username: str, password: str = PASSWORD, address: str = "127.0.0.1") -> bool:
    browser = Client(REMOTE_ADDR=address)
    browser.post(path, {"username": username, "password": password})
    return "_auth_user_id" in browser.session


def test_a_valid_token_is_accepted_from_an_address_that_sent_too_many_bad_ones(settings, alice, token_for):
    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    secret = token_for(alice, "read")
    statuses = [Api("sky_wrong_" + str(i)).get("/api/v1/me").status_code for i in range(5)]
    assert statuses[:3] == [401] * 3 and set(statuses[3:]) == {429}  # guessing still stops
    assert Api(secret).get("/api/v1/me").status_code == 200
    assert Api("sky_wrong_again").get("/api/v1/me").status_code == 429  # and stays stopped


@pytest.mark.parametrize("path", SIGN_IN_PATHS)
def test_failed_sign_ins_for_an_account_lock_it_only_from_the_address_that_failed(path, settings, people):
    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    for _ in range(3):
        assert not sign_in(path, "carol", "wrong", address="203.0.113.66")
    assert not sign_in(path, "carol", address="203.0.113.66")  # the guesser: even the right password
    assert sign_in(path, "carol", address="198.51.100.7")  # carol, elsewhere: not locked out
    assert sign_in(path, "dave", address="203.0.113.66")  # another account from that address


@pytest.mark.parametrize("path", SIGN_IN_PATHS)
def test_one_address_cannot_spray_guesses_over_many_accounts(path, settings, people):
    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    settings.SKILLYARD_THROTTLE_SIGNIN_ADDRESS_FAILURES = "4/min"
    for username in ("carol", "dave", "erin", "nobody"):  # one failure per account: under 3 each
        assert not sign_in(path, username, "wrong", address="203.0.113.66")
    assert not sign_in(path, "frank", address="203.0.113.66")  # the address used up its failures
    assert sign_in(path, "frank", address="198.51.100.7")


def test_the_publish_body_guard_also_accepts_a_valid_token_from_a_blocked_address(settings, alice, token_for):
    """The ASGI guard judges a publish's token before its body is read: the same rule there."""
    from skillyard.body_guard import _token_problem

    settings.SKILLYARD_THROTTLE_AUTH_FAILURES = "3/min"
    meta = {"REMOTE_ADDR": "203.0.113.66"}
    answers = [_token_problem(f"sky_wrong_{i}", meta)[0] for i in range(4)]
    assert answers == [401, 401, 401, 429]
    assert _token_problem(token_for(alice, "publish"), meta) is None  # let in
