"""Two-factor for local accounts (django-allauth): TOTP enrolment, sign-in with a code computed
here (RFC 6238), a recovery code used once, and admins without two-factor refused when
``VIGIL_MFA_REQUIRED`` asks for it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
from datetime import datetime, timedelta

import pytest
from auditlog.models import LogEntry

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse"
START = datetime.fromisoformat("2026-03-02T10:00:05+00:00")


def totp(secret: str, at: datetime) -> str:
    """The RFC 6238 code of ``secret`` at ``at`` (30 s steps, SHA-1, 6 digits)."""
    key = base64.b32decode(secret, casefold=True)
    digest = hmac.new(key, struct.pack(">Q", int(at.timestamp()) // 30), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = (struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 1_000_000
    return f"{value:06d}"


def sign_in(client, username: str = "oncall", password: str = PASSWORD):
    return client.post("/accounts/login/", {"login": username, "password": password})


@pytest.fixture
def now(time_machine):
    time_machine.move_to(START, tick=False)
    return time_machine


def enrol(client, now) -> str:
    """Set up TOTP as a person does on the page (the password asked again first); the secret
    it showed."""
    ask = client.get("/accounts/2fa/totp/activate/")
    assert (
        ask["Location"] == "/accounts/reauthenticate/?next=%2Faccounts%2F2fa%2Ftotp%2Factivate%2F"
    )
    again = client.post(ask["Location"], {"password": PASSWORD})
    assert again["Location"] == "/accounts/2fa/totp/activate/"
    page = client.get("/accounts/2fa/totp/activate/")
    assert page.status_code == 200
    secret = page.context["form"].secret
    assert secret in page.content.decode()  # shown for typing in, beside the QR code
    done = client.post("/accounts/2fa/totp/activate/", {"code": totp(secret, START)})
    assert done.status_code == 302, done.content.decode()[:2000]
    return secret


def test_it_refuses_an_admin_without_two_factor_until_they_set_it_up(client, user, settings, now):
    settings.VIGIL_MFA_REQUIRED = "admins"
    assert sign_in(client).status_code == 302
    refused = client.get("/")
    assert refused.status_code == 403
    assert "Two-factor sign-in required" in refused.content.decode()
    assert client.get("/api/regions/").json() == {
        "error": "Two-factor sign-in is required for your role (VIGIL_MFA_REQUIRED): set it up "
        "first, at /accounts/2fa/"
    }
    enrol(client, now)
    assert client.get("/").status_code == 200
    assert client.get("/api/regions/").status_code == 200


def test_it_leaves_a_viewer_alone_when_only_admins_need_it(client, viewer, settings):
    settings.VIGIL_MFA_REQUIRED = "admins"
    assert sign_in(client, "viewer").status_code == 302
    assert client.get("/").status_code == 200
    settings.VIGIL_MFA_REQUIRED = "everyone"
    assert client.get("/").status_code == 403


def test_it_asks_for_the_code_after_the_password(client, user, now):
    assert sign_in(client).status_code == 302
    secret = enrol(client, now)
    client.post("/accounts/logout/")
    now.move_to(START + timedelta(seconds=60), tick=False)  # a code is accepted once
    step = sign_in(client)
    assert step.status_code == 302 and step["Location"] == "/accounts/2fa/authenticate/"
    assert client.get("/").status_code == 302  # not signed in yet
    wrong = client.post("/accounts/2fa/authenticate/", {"code": "000000"})
    assert wrong.status_code == 200 and "_auth_user_id" not in client.session
    code = totp(secret, START + timedelta(seconds=60))
    done = client.post("/accounts/2fa/authenticate/", {"code": code})
    assert done.status_code == 302 and done["Location"] == "/"
    assert client.get("/").status_code == 200
    signed_in = LogEntry.objects.filter(action=LogEntry.Action.ACCESS, object_repr="oncall")
    assert [e.changes["event"][1] for e in signed_in.order_by("pk")] == [
        "signed in",
        "signed out",
        "signed in",
    ]


def test_it_takes_a_recovery_code_once(client, user, now):
    assert sign_in(client).status_code == 302
    enrol(client, now)
    codes = client.get("/accounts/2fa/recovery-codes/download/").content.decode().split()
    assert len(codes) == 10
    client.post("/accounts/logout/")
    assert sign_in(client)["Location"] == "/accounts/2fa/authenticate/"
    assert client.post("/accounts/2fa/authenticate/", {"code": codes[0]})["Location"] == "/"
    client.post("/accounts/logout/")
    assert sign_in(client)["Location"] == "/accounts/2fa/authenticate/"
    again = client.post("/accounts/2fa/authenticate/", {"code": codes[0]})
    assert again.status_code == 200 and "_auth_user_id" not in client.session
    assert client.post("/accounts/2fa/authenticate/", {"code": codes[1]})["Location"] == "/"


def test_it_shows_the_admin_who_has_two_factor(client, user, admin, now):
    assert sign_in(client).status_code == 302
    enrol(client, now)
    client.force_login(admin)
    page = client.get("/admin/auth/user/").content.decode()
    assert "Two-factor" in page and "Signs in with" in page
    rows = {line for line in page.splitlines() if "field-two_factor" in line}
    assert any('alt="True"' in row for row in rows) and any('alt="False"' in row for row in rows)
