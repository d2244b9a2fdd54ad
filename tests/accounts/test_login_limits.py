"""Login rate limiting (django-axes): a username+address pair is paused after 5 failures, an
IPv6 address counting as its /64, and a username from every address after 20."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from apps.accounts.signin import lockout_address
from apps.lib.clientip import client_ip

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse"


def attempt(
    client, password: str, *, url: str = "/accounts/login/", ip: str = "198.51.100.7", **headers
):
    return client.post(
        url, {"login": "oncall", "password": password}, REMOTE_ADDR=ip, follow=False, **headers
    )


def test_it_locks_out_a_username_and_address_after_five_failures(client, user):
    for _ in range(4):
        assert attempt(client, "wrong").status_code == 200  # the form again, with its error
    assert attempt(client, "wrong").status_code == 429  # the fifth
    response = attempt(client, PASSWORD)  # even the right password, while paused
    assert response.status_code == 429
    assert response["Retry-After"] == "900"
    page = response.content.decode()
    assert "Too many failed logins" in page and "paused for 15 minutes" in page
    assert "oncall" in page
    assert "_auth_user_id" not in client.session


def test_it_keeps_the_lockout_to_that_address(client, user):
    for _ in range(5):
        attempt(client, "wrong")
    response = attempt(client, PASSWORD, ip="203.0.113.9")
    assert response.status_code == 302 and response["Location"] == "/"


def test_it_lifts_the_lockout_after_the_cool_off(client, user, time_machine):
    time_machine.move_to("2026-03-02 10:00:00Z", tick=False)
    for _ in range(5):
        attempt(client, "wrong")
    assert attempt(client, PASSWORD).status_code == 429
    time_machine.move_to("2026-03-02 10:16:00Z", tick=False)
    assert attempt(client, PASSWORD).status_code == 302


def test_it_forgets_failures_after_a_success(client, user):
    for _ in range(4):
        attempt(client, "wrong")
    assert attempt(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        attempt(client, "wrong")
    assert attempt(client, PASSWORD).status_code == 302


def test_it_sends_the_admins_login_to_the_sign_in_page_and_its_lockout(client, django_user_model):
    django_user_model.objects.create_superuser("oncall", "oncall@example.com", PASSWORD)
    for _ in range(5):
        attempt(client, "wrong")
    response = attempt(client, PASSWORD, url="/admin/login/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    assert attempt(client, PASSWORD, url=response["Location"]).status_code == 429


def test_it_counts_an_ipv6_address_as_its_slash_64(client, user):
    for host in range(1, 6):  # five addresses of one /64, as one subscriber's LAN has 2**64
        response = attempt(client, "wrong", ip=f"2001:db8:7:1::{host:x}")
    assert response.status_code == 429
    assert attempt(client, PASSWORD, ip="2001:db8:7:1:ffff::9").status_code == 429
    assert attempt(client, PASSWORD, ip="2001:db8:7:2::1").status_code == 302  # the next /64


def test_it_pauses_a_username_guessed_from_many_addresses(client, user, settings):
    assert settings.VIGIL_LOGIN_USER_FAILURE_LIMIT == 20
    answers = [
        attempt(client, "wrong", ip=f"2001:db8:{n:x}::1").status_code for n in range(1, 21)
    ]  # twenty /64s, each well under its own limit of five
    assert answers == [200] * 19 + [429]
    response = attempt(client, PASSWORD, ip="198.51.100.200")  # a new address: still paused
    assert response.status_code == 429
    assert "from several addresses" in response.content.decode()
    assert "paused everywhere" in response.content.decode()


def test_it_leaves_api_keys_and_forced_logins_alone(client, api_client, user, api_key):
    for _ in range(6):
        attempt(client, "wrong", ip="127.0.0.1")
    response = api_client.get("/api/regions/", HTTP_AUTHORIZATION=f"Bearer {api_key()}")
    assert response.status_code == 200
    client.force_login(user)
    assert client.get("/").status_code == 200


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "203.0.113.5", "10.0.0.2"),  # no proxy: a client's header is ignored
        (1, "203.0.113.5", "203.0.113.5"),  # the proxy's entry
        (1, "6.6.6.6, 203.0.113.5", "203.0.113.5"),  # a forged entry before it is skipped
        (2, "6.6.6.6, 203.0.113.5, 10.0.0.9", "203.0.113.5"),
        (2, "203.0.113.5", "10.0.0.2"),  # fewer entries than proxies: the peer
        (1, "", "10.0.0.2"),
    ],
)
def test_it_takes_the_client_address_the_outermost_proxy_saw(
    settings, proxies, forwarded, expected
):
    settings.VIGIL_PROXY_COUNT = proxies
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", **headers)
    assert client_ip(request) == expected


def test_it_locks_out_by_the_forwarded_address_behind_a_proxy(client, user, settings):
    settings.VIGIL_PROXY_COUNT = 1
    for i in range(5):  # a forged left part changes nothing
        attempt(client, "wrong", ip="10.0.0.2", HTTP_X_FORWARDED_FOR=f"6.6.6.{i}, 203.0.113.5")
    response = attempt(client, PASSWORD, ip="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert response.status_code == 429
    other = attempt(client, PASSWORD, ip="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert other.status_code == 302


@pytest.mark.parametrize(
    ("address", "counted_as"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("2001:db8:7:1:a:b:c:d", "2001:db8:7:1::"),
        ("2001:DB8:7:1::1%eth0", "2001:db8:7:1::"),
        ("::ffff:198.51.100.7", "198.51.100.7"),  # IPv4-mapped: the IPv4 address
        ("not an address", "not an address"),
    ],
)
def test_it_counts_failures_under_the_address_or_its_slash_64(address, counted_as):
    assert lockout_address(address) == counted_as
