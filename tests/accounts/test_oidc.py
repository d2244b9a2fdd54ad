"""OpenID Connect sign-in, in Debian's chromium against a certified provider on loopback
(oidc-provider on Node.js): the first sign-in makes the user with the role of their group, a
group change demotes at the next sign-in, someone in no mapped group is refused with a page
saying so, and sign-out ends Vigil's session and the provider's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import configure_sign_in, screenshot
from tests.services import oidc

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective));
"""


@pytest.fixture
def sso(settings, oidc_provider):
    configure_sign_in(
        settings,
        VIGIL_OIDC_SERVER_URL=oidc_provider.issuer,
        VIGIL_OIDC_CLIENT_ID=oidc.CLIENT_ID,
        VIGIL_OIDC_CLIENT_SECRET=oidc.CLIENT_SECRET,
        VIGIL_OIDC_NAME="Company SSO",
        VIGIL_SIGNIN_ADMIN_GROUPS=["vigil-admins"],
        VIGIL_SIGNIN_OPERATOR_GROUPS=["vigil-oncall"],
        VIGIL_SIGNIN_VIEWER_GROUPS=["vigil-readers"],
    )
    return oidc_provider


def in_thread(work):
    """Run ORM code outside Playwright's context (its connection closed after)."""

    def run():
        from django.db import connections

        try:
            return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def sign_in(page, base: str, name: str, provider) -> None:
    """Through Vigil's button and the provider's own login (and consent) pages."""
    page.goto(base + "/accounts/login/")
    page.click("#sign-in-oidc")
    page.wait_for_url(provider.issuer + "/**")
    page.fill("input[name=login]", name)
    page.fill("input[name=password]", "any password: the provider's development login")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if page.url.startswith(provider.issuer):  # the consent page
        page.click("button[type=submit]")
    page.wait_for_url(base + "/**")
    page.wait_for_load_state()


def nav(page) -> set[str]:
    return set(page.locator("header nav a").all_inner_texts())


def test_it_signs_in_through_the_provider_with_the_role_of_the_groups(
    live_server, sso, browser_page
):
    page, base = browser_page, live_server.url
    page.add_init_script(CSP_LISTENER)
    sso.set_groups("alice", ["staff", "vigil-admins"])
    page.goto(base + "/accounts/login/")
    assert page.locator("#sign-in-oidc").inner_text() == "Sign in with Company SSO"
    screenshot(page, "signin/login-with-sso.png")
    sign_in(page, base, "alice", sso)
    assert page.url == base + "/"
    assert "Log out alice" in page.locator("header nav").inner_text()
    assert {"Audit", "Admin"} <= nav(page)  # an admin
    assert page.evaluate("window.__csp") == []

    # Sign-out ends Vigil's session, then the provider's (its own confirmation page).
    page.click("text=Log out alice")
    page.wait_for_url(sso.issuer + "/session/end**")
    page.click("button[name=logout]")
    page.wait_for_url(base + "/accounts/login/**")
    page.goto(base + "/")
    assert "/accounts/login/" in page.url

    # Demoted in the provider: a viewer at the next sign-in (the provider asks again).
    sso.set_groups("alice", ["vigil-readers"])
    sign_in(page, base, "alice", sso)
    assert page.url == base + "/"
    assert not ({"Audit", "Admin"} & nav(page))

    def alice():
        from auditlog.models import LogEntry
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.get(username="alice")
        entries = LogEntry.objects.filter(action=LogEntry.Action.ACCESS, object_pk=str(user.pk))
        return (
            sorted(user.groups.values_list("name", flat=True)),
            [{k: v[1] for k, v in e.changes.items()} for e in entries.order_by("pk")],
        )

    groups, events = in_thread(alice)
    assert groups == ["Viewer"]
    assert [e["event"] for e in events] == [
        "role from groups",
        "signed in",
        "signed out",
        "role from groups",
        "signed in",
    ]
    assert events[0] == {
        "event": "role from groups", "method": "OpenID Connect", "role": "admin",
        "group": "vigil-admins",
    }  # fmt: skip
    assert events[3]["role"] == "viewer" and events[3]["group"] == "vigil-readers"


def test_it_refuses_someone_in_no_mapped_group_with_a_page_saying_so(
    live_server, sso, browser_page
):
    page, base = browser_page, live_server.url
    page.add_init_script(CSP_LISTENER)
    sso.set_groups("bob", ["finance"])
    sign_in(page, base, "bob", sso)
    assert page.locator("h1").inner_text() == "No role for you in Vigil"
    assert "finance" in page.locator("main").inner_text()
    screenshot(page, "signin/refused.png")
    assert page.evaluate("window.__csp") == []
    page.goto(base + "/")
    assert "/accounts/login/" in page.url  # not signed in

    def bob():
        from auditlog.models import LogEntry

        entry = LogEntry.objects.filter(action=LogEntry.Action.ACCESS).latest("pk")
        return entry.object_repr, entry.changes

    name, changes = in_thread(bob)
    assert name == "bob"
    assert changes["event"] == [None, "refused"] and changes["groups"] == [None, "finance"]
