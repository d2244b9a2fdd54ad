"""VIGIL_LOCAL_SIGNIN=superusers: a password kept by Vigil signs in superusers only (the way in
when the provider is down); everyone else is refused with the page's usual words, and the page
says so. ``everyone`` (the default) signs in any local account."""

from __future__ import annotations

from tests.helpers import ADMIN_PASSWORD


def sign_in(client, username: str, password: str):
    return client.post("/accounts/login/", {"login": username, "password": password})


def test_superusers_only_refuses_everyone_else_and_the_page_says_so(client, user, admin, settings):
    settings.VIGIL_LOCAL_SIGNIN = "superusers"
    refused = sign_in(client, user.username, "correct horse")
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    assert "Your username and password didn't match" in refused.content.decode()
    assert "Passwords kept by Vigil sign in superusers only." in refused.content.decode()
    assert sign_in(client, admin.username, ADMIN_PASSWORD).status_code == 302
    assert client.session["_auth_user_id"] == str(admin.pk)


def test_everyone_signs_in_with_a_local_password_by_default(client, user, settings):
    assert settings.VIGIL_LOCAL_SIGNIN == "everyone"
    assert sign_in(client, user.username, "correct horse").status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)
