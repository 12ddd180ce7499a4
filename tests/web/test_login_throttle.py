"""Login throttling: the client's address from the proxy header only when configured, a limit per
address across usernames, and growing delays (never a lock) for one username tried from anywhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client

PROXY = "10.0.0.1"


@pytest.fixture
def throttle(db: None, settings: Any) -> None:
    settings.WFAPP_LOGIN_FAILURE_LIMIT = 2
    settings.WFAPP_LOGIN_ADDRESS_LIMIT = 4
    settings.WFAPP_LOGIN_DELAY_SECONDS = 60
    settings.WFAPP_LOGIN_MAX_DELAY_SECONDS = 100
    User.objects.create_user("olga", password="the right one")


def _try(username: str, password: str, address: str, forwarded: str | None = None) -> Any:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return Client().post(
        "/login/", {"username": username, "password": password}, REMOTE_ADDR=address, headers=headers
    )


def test_behind_a_proxy_the_lock_holds_the_client_not_the_proxy(throttle: None, settings: Any) -> None:
    settings.WFAPP_PROXY_COUNT = 1
    attacker = "203.0.113.5"
    statuses = [_try("olga", f"wrong {n}", PROXY, f"198.18.0.1, {attacker}").status_code for n in range(3)]
    assert statuses == [200, 429, 429]  # the forged first entry changes nothing: the last one counts
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {attacker}
    assert _try("olga", "the right one", PROXY, "198.51.100.7").status_code == 302  # olga elsewhere


def test_without_a_configured_proxy_the_header_is_ignored(throttle: None) -> None:
    for n in range(2):
        _try("olga", f"wrong {n}", "192.0.2.9", f"198.51.100.{n}")  # a new "address" each time
    assert _try("olga", "the right one", "192.0.2.9", "198.51.100.99").status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"192.0.2.9"}


def test_one_address_cannot_spray_a_password_over_every_username(throttle: None) -> None:
    User.objects.create_user("piet", password="pw-piet")
    sprayer = "192.0.2.66"
    assert [_try(name, "Winter2026!", sprayer).status_code for name in ("ann", "bob", "cy", "dee")] == [
        200
    ] * 4
    refused = _try("piet", "pw-piet", sprayer)  # even a right password, from that address
    assert refused.status_code == 429 and 'data-rule="address"' in refused.content.decode()
    assert int(refused["Retry-After"]) > 0
    assert _try("piet", "pw-piet", "192.0.2.67").status_code == 302  # from another address: fine


def test_one_username_from_many_addresses_gets_growing_delays_not_a_lock(throttle: None) -> None:
    # One failure from each address: no address and no pair reaches its limit; the third is one
    # over the limit for the username, so the next attempt from anywhere waits.
    assert [_try("olga", "wrong", f"198.51.100.{n}").status_code for n in range(3)] == [200, 200, 200]
    waiting = _try("olga", "the right one", "192.0.2.1")
    assert waiting.status_code == 429 and 'data-rule="username"' in waiting.content.decode()
    first = int(waiting["Retry-After"])
    assert 50 < first <= 60
    for _ in range(5):  # attempts refused during the delay are not failures: it does not grow
        assert int(_try("olga", "wrong", "198.51.100.50")["Retry-After"]) <= first

    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=61))  # time passes
    assert _try("olga", "wrong again", "198.51.100.60").status_code == 200  # counted: the delay doubles
    assert 90 < int(_try("olga", "the right one", "192.0.2.1")["Retry-After"]) <= 100  # capped at 100

    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=101))
    assert _try("olga", "the right one", "192.0.2.1").status_code == 302  # never locked for good
