"""LDAP sign-in against Debian's slapd on loopback: bind, groups -> roles, TLS with the test's
own CA (StartTLS and ldaps), a wrong password counted by the lockout, all in the audit trail."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured

from apps.accounts import conf
from apps.accounts.roles import role_of
from tests.helpers import configure_sign_in
from tests.services import slapd as directory

pytestmark = pytest.mark.django_db


@pytest.fixture
def ldap_sign_in(settings, slapd):
    """Vigil pointed at the directory over StartTLS, as .env.example's LDAP example reads."""
    configure_sign_in(
        settings,
        VIGIL_LDAP_SERVER_URI=slapd.uri,
        VIGIL_LDAP_START_TLS=True,
        VIGIL_LDAP_CA_FILE=slapd.ca_file,
        VIGIL_LDAP_BIND_DN=directory.READER_DN,
        VIGIL_LDAP_BIND_PASSWORD=directory.READER_PASSWORD,
        VIGIL_LDAP_USER_SEARCH_BASE=directory.PEOPLE,
        VIGIL_LDAP_GROUP_SEARCH_BASE=directory.GROUPS,
        VIGIL_SIGNIN_ADMIN_GROUPS=["vigil-admins"],
        VIGIL_SIGNIN_OPERATOR_GROUPS=[directory.group("vigil-oncall")],  # by DN works too
    )
    return slapd


def sign_in(client, uid: str, password: str | None = None, ip: str = "198.51.100.20"):
    return client.post(
        "/accounts/login/",
        {"login": uid, "password": password if password is not None else f"pw-{uid}"},
        REMOTE_ADDR=ip,
    )


def events(username: str) -> list[tuple[str, dict]]:
    entries = LogEntry.objects.filter(action=LogEntry.Action.ACCESS, object_repr=username).order_by(
        "pk"
    )
    return [
        (e.changes["event"][1], {k: v[1] for k, v in e.changes.items() if k != "event"})
        for e in entries
    ]


def test_it_signs_in_through_the_directory_with_the_role_of_the_groups(client, ldap_sign_in):
    response = sign_in(client, "ada")
    assert response.status_code == 302 and response["Location"] == "/"
    ada = get_user_model().objects.get(username="ada")
    assert role_of(ada) == "admin" and not ada.has_usable_password()
    assert (ada.email, ada.first_name) == ("ada@example.com", "Ada")
    assert client.get("/").status_code == 200
    assert events("ada") == [
        ("role from groups", {"method": "LDAP", "role": "admin", "group": "vigil-admins"}),
        ("signed in", {"method": "LDAP", "role": "admin"}),
    ]
    client.post("/accounts/logout/")
    assert sign_in(client, "otto").status_code == 302
    assert role_of(get_user_model().objects.get(username="otto")) == "operator"


def test_it_demotes_at_the_next_sign_in_after_a_group_change(client, ldap_sign_in):
    assert sign_in(client, "ada").status_code == 302
    client.post("/accounts/logout/")
    ldap_sign_in.set_members("vigil-admins", [])
    ldap_sign_in.set_members("vigil-oncall", ["otto", "nora", "ada"])
    try:
        assert sign_in(client, "ada").status_code == 302
    finally:
        ldap_sign_in.set_members("vigil-admins", ["ada"])
        ldap_sign_in.set_members("vigil-oncall", ["otto", "nora"])
    ada = get_user_model().objects.get(username="ada")
    assert role_of(ada) == "operator"
    assert events("ada")[-2] == (
        "role from groups",
        {"method": "LDAP", "role": "operator", "group": directory.group("vigil-oncall")},
    )
    assert events("ada")[-1] == ("signed in", {"method": "LDAP", "role": "operator"})


def test_it_refuses_someone_in_no_mapped_group(client, ldap_sign_in):
    response = sign_in(client, "fred")
    assert response.status_code == 200
    assert "none of your groups gives a role in Vigil" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert not get_user_model().objects.get(username="fred").is_active
    groups = f"finance, {directory.group('finance')}"
    assert events("fred") == [("refused", {"method": "LDAP", "groups": groups})]


def test_it_counts_a_wrong_directory_password_toward_the_lockout(client, ldap_sign_in):
    for _ in range(4):
        assert sign_in(client, "otto", "wrong").status_code == 200
    assert sign_in(client, "otto", "wrong").status_code == 429
    assert sign_in(client, "otto").status_code == 429  # the right one, while paused
    assert [event for event, _ in events("otto")] == ["sign-in failed"] * 6
    assert events("otto")[-1][1] == {
        "method": "password",
        "lockout": "paused (too many failed logins)",
    }
    assert not get_user_model().objects.filter(username="otto", last_login__isnull=False).exists()


def test_it_signs_in_over_ldaps_with_the_ca_file(client, settings, ldap_sign_in):
    configure_sign_in(
        settings, VIGIL_LDAP_SERVER_URI=ldap_sign_in.ldaps_uri, VIGIL_LDAP_START_TLS=False
    )
    assert sign_in(client, "otto").status_code == 302


def test_it_refuses_a_server_whose_certificate_the_ca_file_does_not_sign(
    client, settings, ldap_sign_in, tmp_path
):
    other_ca = directory.make_ca(tmp_path, "other-ca")
    configure_sign_in(settings, VIGIL_LDAP_CA_FILE=str(other_ca))
    assert sign_in(client, "otto").status_code == 200  # the form again: not signed in
    configure_sign_in(
        settings, VIGIL_LDAP_SERVER_URI=ldap_sign_in.ldaps_uri, VIGIL_LDAP_START_TLS=False
    )
    assert sign_in(client, "otto").status_code == 200
    assert "_auth_user_id" not in client.session


def test_it_never_signs_in_to_a_local_account_through_the_directory(
    client, ldap_sign_in, django_user_model
):
    django_user_model.objects.create_user("otto", password="a local password")
    assert sign_in(client, "otto").status_code == 200  # the directory's password: refused
    assert sign_in(client, "otto", "a local password").status_code == 302


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"VIGIL_LDAP_USER_SEARCH_BASE": ""}, "VIGIL_LDAP_USER_SEARCH_BASE must be set"),
        (
            {"VIGIL_LDAP_START_TLS": True, "VIGIL_LDAP_SERVER_URI": "ldaps://dc1:636"},
            "ldaps is TLS",
        ),
        ({"VIGIL_LDAP_USER_FILTER": "(uid=bob)"}, "it must hold %(user)s"),
        ({"VIGIL_LDAP_GROUP_SEARCH_BASE": ""}, "VIGIL_LDAP_GROUP_SEARCH_BASE must say"),
        (
            {"VIGIL_SIGNIN_ADMIN_GROUPS": [], "VIGIL_SIGNIN_OPERATOR_GROUPS": []},
            "nobody could sign in",
        ),
    ],
)
def test_it_stops_the_start_on_a_half_given_directory(settings, values, message):
    pytest.importorskip("django_auth_ldap")  # make test installs it (requirements/ldap.txt)
    good = {s.name: s.default for s in conf.SETTINGS} | {
        "VIGIL_LDAP_SERVER_URI": "ldap://dc1.example.com",
        "VIGIL_LDAP_USER_SEARCH_BASE": "ou=people,dc=example,dc=com",
        "VIGIL_LDAP_GROUP_SEARCH_BASE": "ou=groups,dc=example,dc=com",
        "VIGIL_SIGNIN_ADMIN_GROUPS": ["vigil-admins"],
    }
    conf.sign_in_settings(good)
    with pytest.raises(ImproperlyConfigured, match=message.replace("(", r"\(").replace(")", r"\)")):
        conf.sign_in_settings(good | values)
