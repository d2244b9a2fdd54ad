"""Security pass: every route needs a login or a key, and no secret ever leaves Vigil.

The URL conf is walked, not listed: a route added later is checked the day it is added. Each
pattern gets a concrete URL by filling its converters and named groups with plausible values
(the planted objects below all have the primary key ``PK``), and the URL must resolve back to
the same view.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver, include, path, resolve
from django.urls.resolvers import RegexPattern, RoutePattern
from django.utils import timezone

from tests.helpers import ROOT, log_in
from tests.services import vigil_env

pytestmark = pytest.mark.slow

PK = 7001
HOST_NAME = "planted-host"

# Routes anyone may open, each with the reason. Everything else must refuse an anonymous client.
PUBLIC_ROUTES = {
    "account_login": "the sign-in page itself",
    "admin:login": "the admin's login page: it sends an anonymous visitor to the sign-in page",
    "account_logout": "signing out; an anonymous visitor is sent to the sign-in page",
    "account_inactive": "says an account is inactive, to whoever a sign-in refused for it",
    "openid_connect_login": "starts a sign-in at the OpenID Connect provider",
    "openid_connect_callback": "where the provider sends the browser back, before any session",
    "socialaccount_login_error": "says a provider's sign-in failed, before any session",
    "socialaccount_login_cancelled": "says a provider's sign-in was cancelled",
    "socialaccount_signup": "a provider's first sign-in, when allauth cannot finish it alone",
    "mfa_authenticate": "the second step of a sign-in: the code, before the session exists",
    "healthz": "load balancers and Docker probe it without a session; it says ok or not, no data",
    "favicon": "browsers ask for it before logging in; the neutral icon, no status in it",
}
# Where a page may send an anonymous visitor: the login page, or the admin's for admin views.
LOGIN_PAGES = ("/accounts/login/?", "/admin/login/?")
# Static files are served by WhiteNoise's middleware, outside the URL conf, and are public.


@dataclass(frozen=True)
class Route:
    url: str
    name: str  # "namespace:name", or the pattern text for an unnamed one
    callback: object


def _group_spans(regex: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, name, inner regex) of each ``(?P<name>...)`` group, nesting-aware."""
    for match in re.finditer(r"\(\?P<(\w+)>", regex):
        depth, i, in_class = 1, match.end(), False
        while depth:
            ch = regex[i]
            if ch == "\\":
                i += 2
                continue
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        yield match.start(), i, match.group(1), regex[match.end() : i - 1]


def _candidates(name: str, regex: str, values: dict[str, str]) -> list[str]:
    alternatives = regex.split("|") if re.fullmatch(r"[\w|]+", regex) else []
    generic = [*alternatives, str(PK), "json", ".json", HOST_NAME, "x"]
    return [values[name], *generic] if name in values else generic


def _value(name: str, regex: str, values: dict[str, str]) -> str:
    for candidate in _candidates(name, regex, values):
        if re.fullmatch(regex, candidate):
            return candidate
    raise AssertionError(f"no plausible value for <{name}> ({regex}); add one to the walk")


def _fill(pattern: RoutePattern | RegexPattern, values: dict[str, str]) -> str:
    if isinstance(pattern, RoutePattern):

        def converter_value(match: re.Match) -> str:
            converter = pattern.converters[match.group(2)]
            return converter.to_url(
                converter.to_python(_value(match.group(2), converter.regex, values))
            )

        return re.sub(r"<(?:(\w+):)?(\w+)>", converter_value, str(pattern))
    regex = str(pattern)
    out, last = "", 0
    for start, end, name, inner in _group_spans(regex):
        out += regex[last:start] + "\0" + _value(name, inner, values) + "\0"
        last = end
    out += regex[last:]
    # What is left outside the groups is literal text with anchors and optional slashes.
    pieces = out.split("\0")
    for i in range(0, len(pieces), 2):
        text = re.sub(r"^\^|\$$|\\Z$", "", pieces[i]).replace("/?", "/")
        pieces[i] = re.sub(r"\\(.)", r"\1", text)
    return "".join(pieces)


def walk(values: dict[str, str]) -> list[Route]:
    """Every view of the URL conf with a concrete URL that resolves back to it."""
    routes = []

    def visit(resolver: URLResolver, prefix: str, namespace: str) -> None:
        for entry in resolver.url_patterns:
            url = prefix + _fill(entry.pattern, values)
            if isinstance(entry, URLResolver):
                ns = entry.namespace
                visit(entry, url, f"{namespace}{ns}:" if ns else namespace)
                continue
            assert isinstance(entry, URLPattern)
            name = f"{namespace}{entry.name}" if entry.name else str(entry.pattern)
            routes.append(Route(url, name, entry.callback))

    visit(get_resolver(), "/", "")
    # A URL that reaches another view would test that view twice and this one never.
    unresolved = [(r.name, r.url) for r in routes if resolve(r.url).func is not r.callback]
    assert not unresolved, f"give these a plausible value in the walk: {unresolved}"
    return routes


def anonymous_answer_problem(client, route: Route, method: str) -> str | None:
    """Why the anonymous answer to ``route`` is wrong, or None when it refuses properly."""
    response = getattr(client, method)(route.url)
    status = response.status_code
    if status in (401, 403):
        return None
    if status == 405 and method != "get":
        return None  # the view takes no such request at all: nothing to protect
    to_login = status == 302 and response["Location"].startswith(LOGIN_PAGES)
    if to_login and not route.url.startswith("/api/"):
        return None
    return f"{method.upper()} {route.url} ({route.name}) answered {status} to an anonymous client"


def unprotected_routes(client, values: dict[str, str]) -> list[str]:
    problems = []
    for route in walk(values):
        if route.name in PUBLIC_ROUTES:
            continue
        for method in ("get", "post"):
            problem = anonymous_answer_problem(client, route, method)
            if problem:
                problems.append(problem)
    return problems


PLAIN_VALUES = {"concern": "efs", "format": "json", "name": HOST_NAME, "provider_id": "oidc"}


@pytest.mark.django_db
def test_it_refuses_every_route_but_the_public_ones_to_an_anonymous_client(client):
    routes = walk(PLAIN_VALUES)
    names = {r.name for r in routes}
    # The walk really reaches pages, the API, the schema and the admin.
    assert {
        "regions:home",
        "efs:filesystem_detail",
        "api:schema",
        "api:docs",
        "admin:index",
    } <= names
    assert {"api:efs-filesystem-list", "api:raid-report"} <= names
    assert set(PUBLIC_ROUTES) <= names
    assert unprotected_routes(client, PLAIN_VALUES) == []


@login_not_required
def _forgotten_view(request):
    return HttpResponse("fleet data for anyone")


urlpatterns = [path("forgotten/", _forgotten_view), path("", include("config.urls"))]


@pytest.mark.django_db
@pytest.mark.urls("tests.test_security")
def test_it_catches_a_route_added_without_auth(client):
    assert unprotected_routes(client, PLAIN_VALUES) == [
        "GET /forgotten/ (forgotten/) answered 200 to an anonymous client",
        "POST /forgotten/ (forgotten/) answered 200 to an anonymous client",
    ]


@pytest.mark.django_db
def test_it_lets_anyone_reach_the_public_routes(client):
    assert client.get("/accounts/login/").status_code == 200
    assert client.get("/admin/login/")["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    assert client.get("/healthz").status_code == 200
    assert client.get("/favicon.ico")["Content-Type"] == "image/svg+xml"


# --- Planted secrets --------------------------------------------------------------------------

SSH_KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAAPLANTEDsshKEYbodyQUFBQUFB0123456789"
PLANTED = {
    "AWS secret access key": "PLANTEDawsSecretAccessKey0123456789abcdefgh",
    "AWS access key id": "AKIAPLANTED000000001",
    "SES SMTP password": "PLANTED-ses-smtp-password-4f1e",
    "account external id": "PLANTED-external-id-77c2",
    "Galera password (env)": "PLANTED-galera-env-password-5a9",
    "Galera password (file)": "PLANTED-galera-file-password-c3d",
    "SSH private key": SSH_KEY_BODY,
    "SSH key passphrase": "PLANTED-ssh-passphrase-0b7",
    "SECRET_KEY": "PLANTED-django-secret-key-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "database password": "PLANTED-database-password-e21",
    "user password": "PLANTED-user-password-8d4",
    "webhook signing secret": "PLANTED-webhook-secret-61b0f",
    "PagerDuty routing key": "PLANTEDpagerdutyKEY0123456789abc",
    "Slack webhook URL": "PLANTEDslackWEBHOOKpath7e2",
}


@pytest.fixture
def planted(db, settings, monkeypatch, tmp_path, django_user_model):
    """Every kind of secret Vigil holds, planted with distinctive values; what to look for."""
    from django.db import connection

    from apps import alerts
    from apps.accounts.models import ApiKey
    from apps.alerts.models import Channel, Rule, Silence
    from apps.efs.models import FileSystem
    from apps.galera.models import Cluster, Node
    from apps.lib.status import Status, Verdict
    from apps.probes.models import Result, Target
    from apps.raid.models import Array, Host, Member
    from apps.regions.models import Account, Region

    secrets = dict(PLANTED)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secrets["AWS secret access key"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", secrets["AWS access key id"])
    monkeypatch.setenv("GALERA_PLANTED_PASSWORD", secrets["Galera password (env)"])
    settings.EMAIL_HOST_PASSWORD = secrets["SES SMTP password"]
    settings.SECRET_KEY = secrets["SECRET_KEY"]
    settings.VIGIL_RAID_SSH_KEY = (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    settings.VIGIL_RAID_SSH_KEY_PASSPHRASE = secrets["SSH key passphrase"]
    settings.VIGIL_GALERA_SECRETS_DIR = str(tmp_path)
    (tmp_path / "galera-b").write_text(secrets["Galera password (file)"])
    # Never used to connect (SQLite ignores it; the test server trusts loopback).
    monkeypatch.setitem(connection.settings_dict, "PASSWORD", secrets["database password"])
    monkeypatch.setitem(settings.DATABASES["default"], "PASSWORD", secrets["database password"])

    superuser = django_user_model.objects.create_superuser(
        "planted-admin", "admin@example.com", secrets["user password"], pk=PK
    )
    secrets["user password hash"] = superuser.password
    account = Account.objects.create(
        pk=PK,
        name="planted-account",
        role_arn="arn:aws:iam::123456789012:role/vigil-reader",
        external_id=secrets["account external id"],
    )
    region = Region.objects.create(
        pk=PK, account=account, code="eu-west-1", opt_in_status="opted-in"
    )
    fs = FileSystem.objects.create(pk=PK, region=region, filesystem_id="fs-0123abcd", name="home")
    cluster = Cluster.objects.create(pk=PK, region=region, name="planted-cluster")
    Node.objects.create(
        pk=PK, cluster=cluster, host="127.0.0.1", port=1, password_env="GALERA_PLANTED_PASSWORD"
    )
    Node.objects.create(cluster=cluster, host="127.0.0.1", port=2, password_file="galera-b")
    pushing = Node.objects.create(cluster=cluster, host="127.0.0.1", port=3, mode=Node.Mode.PUSH)
    secrets["Galera node push token"] = pushing.issue_token()
    pushing.refresh_from_db()
    secrets["Galera node push token hash"] = pushing.token_hash
    host = Host.objects.create(
        pk=PK, name=HOST_NAME, region=region, collection=Host.Collection.SSH,
        ssh_address="127.0.0.1", ssh_port=1,
    )  # fmt: skip
    secrets["RAID push token"] = host.issue_token()
    host.refresh_from_db()
    secrets["RAID push token hash"] = host.token_hash
    array = Array.objects.create(pk=PK, host=host, region=region, name="md0")
    Member.objects.create(pk=PK, array=array, device="sdb1", role=0)
    target = Target.objects.create(pk=PK, region=region, url="https://shop.example.com/")
    Result.objects.create(
        pk=PK,
        target=target,
        started_at=timezone.now(),
        cap_s=30,
        error="refused",
        status="critical",
    )
    channel = Channel.objects.create(pk=PK, name="On call", target="oncall@example.com")
    Rule.objects.create(pk=PK, name="Everything", min_severity="warning").channels.add(channel)
    # Secrets of the other kinds, saved the way the page saves them (audit trail included),
    # then sent to a port where nothing listens, so their failures are logged too.
    for kind, target, secret in (
        ("webhook", "http://127.0.0.1:9/hook", secrets["webhook signing secret"]),
        ("pagerduty", "http://127.0.0.1:9/v2/enqueue", secrets["PagerDuty routing key"]),
        ("slack", "", f"http://127.0.0.1:9/services/{secrets['Slack webhook URL']}"),
    ):
        extra = Channel(name=f"planted {kind}", kind=kind, target=target, secret=secret)
        extra.full_clean()
        extra.save()
        Rule.objects.get(pk=PK).channels.add(extra)
    Silence.objects.create(pk=PK, ends=timezone.now() + timedelta(hours=1), author=superuser)
    alerts.record(fs, Verdict(Status.CRITICAL, "Burst credits exhausted"))
    key, raw = ApiKey.issue(superuser, "planted key", read_only=False)
    ApiKey.objects.filter(pk=key.pk).update(id=PK)
    secrets["API key"] = raw
    secrets["API key hash"] = key.hashed
    return {"secrets": secrets, "admin": superuser}


def _leaks(text: str, secrets: dict[str, str]) -> list[str]:
    return [what for what, value in secrets.items() if value in text]


def _response_text(response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    cookies = "\n".join(str(c) for c in response.cookies.values())
    body = b"".join(response) if response.streaming else response.content
    return f"{headers}\n{cookies}\n{body.decode(errors='replace')}"


@pytest.mark.django_db
def test_it_never_shows_or_logs_a_planted_secret(client, planted, caplog, settings):
    from apps.efs.models import FileSystem
    from apps.galera.tasks import poll_cluster
    from apps.raid.tasks import collect_host

    secrets = planted["secrets"]
    caplog.set_level(logging.DEBUG)
    settings.VIGIL_RAID_SSH_CONNECT_TIMEOUT = 2
    # The work that uses the secrets, failing as it would against hosts that do not answer.
    poll_cluster(PK)
    collect_host(PK)
    from apps.alerts import delivery

    delivery.send_due()  # the webhook, PagerDuty and Slack channels fail: nothing listens
    # A failed login with a planted password, then a wrong and a right API key.
    client.post("/accounts/login/", {"login": "planted-admin", "password": secrets["API key"]})
    client.get("/api/regions/", headers={"Authorization": f"Bearer {secrets['API key']}x"})
    values = {
        **PLAIN_VALUES,
        "content_type": str(_content_type_pk(FileSystem)),
        "object_id": str(PK),
        "pk": str(PK),
    }
    routes = walk(values)
    leaks, errors = [], []
    client.force_login(planted["admin"])
    client.raise_request_exception = False  # a server error is listed, and the walk goes on
    key_header = {"Authorization": f"Bearer {secrets['API key']}"}
    for route in routes:
        for headers in ({}, key_header) if route.url.startswith("/api/") else ({},):
            response = client.get(route.url, headers=headers)
            if response.status_code >= 500:
                errors.append(f"{route.url} answered {response.status_code}")
            leaks += [f"{route.url}: {what}" for what in _leaks(_response_text(response), secrets)]
    schema = client.get("/api/schema/?format=json")
    leaks += [f"schema: {what}" for what in _leaks(_response_text(schema), secrets)]
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''} {r.args!r}" for r in caplog.records)
    leaks += [f"logs: {what}" for what in _leaks(logged, secrets)]
    assert leaks == []
    assert errors == []
    # The walk did reach the planted objects' pages, not just their 404s.
    assert client.get(f"/admin/regions/account/{PK}/change/").status_code == 200
    assert client.get(f"/admin/galera/cluster/{PK}/change/").status_code == 200  # nodes inline
    assert client.get(f"/raid/hosts/{PK}/").status_code == 200
    assert client.get(f"/api/accounts/{PK}/", headers=key_header).status_code == 200


def _content_type_pk(model: type) -> int:
    from django.contrib.contenttypes.models import ContentType

    return ContentType.objects.get_for_model(model).pk


# --- Content-Security-Policy and production settings -------------------------------------------


def _policy(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {d.split()[0]: " ".join(d.split()[1:]) for d in header.split(";") if d.strip()}


@pytest.mark.django_db
def test_it_sends_a_strict_content_security_policy_on_the_login_page(client):
    response = client.get("/accounts/login/")
    policy = _policy(response)
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert policy["base-uri"] == "'self'" and policy["form-action"] == "'self'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    page = response.content.decode()
    assert "<script>" not in page and "style=" not in page
    assert 'name="csrfmiddlewaretoken"' in page


@pytest.mark.django_db
def test_it_refuses_a_login_post_without_its_csrf_token(user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"login": "oncall", "password": "correct horse"})
    assert response.status_code == 403
    page = client.get("/accounts/login/")
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/accounts/login/",
        {"login": "oncall", "password": "correct horse", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302 and "Content-Security-Policy" in response


@pytest.mark.django_db
def test_it_gives_the_api_docs_inline_bootstrap_a_nonce(logged_in_client):
    response = logged_in_client.get("/api/docs/")
    assert response.status_code == 200
    nonce = re.search(r"'nonce-([^']+)'", _policy(response)["script-src"]).group(1)
    page = response.content.decode()
    assert f'<script nonce="{nonce}">' in page and f'<style nonce="{nonce}">' in page
    assert "<script>" not in page and "<style>" not in page


def _production(*argv: str) -> subprocess.CompletedProcess:
    """Run Python with the production settings and the least they require."""
    clean = vigil_env(
        "config.settings.production",
        SECRET_KEY="a-production-key-of-more-than-fifty-characters-0123456789",
        ALLOWED_HOSTS="vigil.example.com",
    )
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_keeps_cookies_secure_and_sends_hsts_and_csp_in_production():
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "from csp.utils import build_policy; "
        "names = ['SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SESSION_COOKIE_HTTPONLY', "
        "'CSRF_COOKIE_HTTPONLY', 'SESSION_COOKIE_SAMESITE', 'CSRF_COOKIE_SAMESITE', "
        "'SECURE_HSTS_SECONDS', 'SECURE_CONTENT_TYPE_NOSNIFF', 'X_FRAME_OPTIONS', "
        "'SECURE_PROXY_SSL_HEADER', 'VIGIL_PROXY_COUNT', 'DEBUG', 'AXES_FAILURE_LIMIT']; "
        "print(json.dumps({**{n: getattr(s, n) for n in names}, 'csp': build_policy()}))"
    )
    result = _production("-c", code)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values == values | {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "CSRF_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "CSRF_COOKIE_SAMESITE": "Lax",
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "X_FRAME_OPTIONS": "DENY",
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "VIGIL_PROXY_COUNT": 1,
        "DEBUG": False,
        "AXES_FAILURE_LIMIT": 5,
    }
    policy = values["csp"]
    assert "upgrade-insecure-requests" in policy and "script-src 'self'" in policy
    assert "unsafe" not in policy


def test_it_passes_djangos_deploy_check_but_for_choices_left_to_the_operator():
    result = _production("manage.py", "check", "--deploy")
    assert result.returncode == 0, result.stderr
    reported = set(re.findall(r"\((security\.\w+)\)", result.stderr + result.stdout))
    # HTTPS redirects are the proxy's job (SECURE_SSL_REDIRECT=true without one); whether every
    # subdomain is HTTPS-only, and HSTS preloading, are the domain owner's decisions.
    assert reported <= {"security.W008", "security.W005", "security.W021"}


# --- In a browser: no page trips the policy ---------------------------------------------------

CSP_LISTENER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} in ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_shows_every_kind_of_page_in_chromium_without_a_csp_violation(
    live_server, demo_in_chromium
):
    page, region_pk, fs_pk = demo_in_chromium
    console = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(CSP_LISTENER)
    violations = {}

    def visit(path: str, ready: str) -> None:
        page.goto(live_server.url + path, wait_until="networkidle")
        page.wait_for_selector(ready)
        violations[path] = page.evaluate("window.__csp")

    visit("/accounts/login/", "#id_login")
    log_in(page, live_server.url)
    page.wait_for_selector("#tiles .tile")
    visit("/", "#tiles .tile")
    visit(f"/regions/{region_pk}/", "table.efs-table")
    visit(f"/efs/filesystems/{fs_pk}/?range=3h", ".timeseries .uplot canvas")
    visit("/admin/", "#content-main")
    visit("/admin/regions/account/", "#changelist")
    page.click("#result_list tbody th a")  # the demo account's change form
    page.wait_for_selector("#account_form")
    violations["/admin/regions/account/<pk>/change/"] = page.evaluate("window.__csp")
    visit("/accounts/2fa/", "main h1")  # allauth's two-factor pages, in Vigil's layout
    visit("/accounts/reauthenticate/", "#id_password")
    visit("/api/docs/", ".swagger-ui .information-container")
    page.click(".opblock-summary")  # open one operation: its parameters and schema render
    page.wait_for_selector(".opblock-body")
    violations["/api/docs/ (opened)"] = page.evaluate("window.__csp")

    assert {path: found for path, found in violations.items() if found} == {}
    assert [m for m in console if "Content Security Policy" in m] == []
    # The listener does hear the policy: an injected inline script is refused and reported.
    page.evaluate("document.body.appendChild(document.createElement('script')).text = '1'")
    page.wait_for_function("window.__csp.length > 0")
    assert "script-src" in page.evaluate("window.__csp[0]")
    assert len(violations) == 11


# --- Roles: every unsafe route, walked as each role --------------------------------------------

# Unsafe routes a viewer may use, each with the reason.
VIEWER_MAY = {
    "account_logout": "anyone may sign out",
    "account_login": "signing in again, as someone else",
    "account_reauthenticate": "confirming one's own password before changing two-factor",
    "openid_connect_login": "signing in again through the provider",
    "openid_connect_callback": "the provider's answer to a sign-in",
    "socialaccount_signup": "a provider's first sign-in",
    "mfa_index": "everyone manages their own two-factor",
    "mfa_reauthenticate": "confirming one's own second factor before changing it",
    "mfa_activate_totp": "everyone manages their own two-factor",
    "mfa_deactivate_totp": "everyone manages their own two-factor",
    "mfa_view_recovery_codes": "everyone manages their own two-factor",
    "mfa_generate_recovery_codes": "everyone manages their own two-factor",
    "mfa_download_recovery_codes": "everyone manages their own two-factor",
    "mfa_list_webauthn": "everyone manages their own two-factor",
    "mfa_add_webauthn": "everyone manages their own two-factor",
    "mfa_remove_webauthn": "everyone manages their own two-factor",
    "mfa_edit_webauthn": "everyone manages their own two-factor",
    "mfa_reauthenticate_webauthn": "everyone manages their own two-factor",
    "accounts:preferences": "everyone sets their own colour scheme and time zone",
    "accounts:api-keys": "everyone manages their own API keys (a viewer's are read-only)",
    "accounts:revoke-api-key": "everyone may revoke their own API keys",
    "api:apikey-list": "everyone manages their own API keys (a viewer's are read-only)",
    "api:apikey-detail": "everyone may revoke their own API keys",
}
# What an operator may change besides; everything else of the API and the pages is refused.
OPERATOR_MAY = {
    "alerts:acknowledge",
    "alerts:acknowledge-cause",
    "alerts:add-note",
    "api:cause-acknowledge",
    "api:incident-notes",
    "alerts:new-silence",
    "alerts:expire-silence",
    "alerts:resend",
    "api:channel-resend",
    "probes:target_enable",
    "probes:presets",
    "probes:target_add",
    "probes:target_edit",
    "api:incident-acknowledge",
    "api:silence-list",
    "api:silence-detail",
    "api:probe-target-list",
    "api:probe-target-detail",
    "admin:password_change",  # their own password, in the admin site they may now open
}
OPERATOR_ADMIN_PAGES = ("admin:alerts_silence_", "admin:probes_target_")
UNSAFE = ("post", "put", "patch", "delete")


def _refused(response, route: Route) -> bool:
    """403; 405 (no such request at all); 401 (a route that takes no session, such as the RAID
    push); or, in the admin site, its login page."""
    if response.status_code in (401, 403, 405):
        return True
    to_login = response.status_code == 302 and response["Location"].startswith("/admin/login/")
    return route.name.startswith("admin:") and to_login


def _unsafe_routes(routes: list[Route]) -> list[Route]:
    """Routes that can change something: the API, Vigil's pages, and the admin's
    add/change/delete pages (the admin's other pages only show)."""
    shown_only = set(PUBLIC_ROUTES) | {"prometheus:metrics", "api:schema", "api:docs"}
    chosen = []
    for route in routes:
        if route.name in shown_only:
            continue
        if route.url.startswith("/admin/") and not route.name.endswith(
            ("_add", "_change", "_delete")
        ):
            continue
        chosen.append(route)
    return chosen


def _answers(
    client, routes: list[Route], headers: dict[str, str], skip: Callable[[Route], bool]
) -> Iterator[tuple[Route, str, object]]:
    """Every unsafe request of the routes but those ``skip`` names (each unsafe method on the
    API, POST elsewhere), sent with ``headers``: (route, method, response)."""
    for route in routes:
        if skip(route):
            continue
        for method in UNSAFE if route.url.startswith("/api/") else ("post",):
            yield route, method.upper(), getattr(client, method)(route.url, headers=headers)


@pytest.fixture
def roles_walk(planted, settings, django_user_model):
    """The planted objects, the URL conf's routes with their values, and a user per role."""
    from django.contrib.auth.models import Group

    from apps.accounts.models import ApiKey
    from apps.efs.models import FileSystem

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": dict.fromkeys(("read", "write", "user_read", "user_write")),
    }
    values = {
        **PLAIN_VALUES,
        "content_type": str(_content_type_pk(FileSystem)),
        "object_id": str(PK),
        "pk": str(PK),
    }
    users = {}
    for role, group in (("viewer", None), ("operator", "Operator"), ("admin", "Admin")):
        users[role] = django_user_model.objects.create_user(f"walk-{role}", password="pw")
        if group:
            users[role].groups.add(Group.objects.get(name=group))
    demoted = django_user_model.objects.create_user("walk-demoted", password="pw")
    demoted.groups.add(Group.objects.get(name="Admin"))
    _, demoted_key = ApiKey.issue(demoted, "made while an admin", read_only=False)
    demoted.groups.clear()  # now a viewer: the read-write key must act as one
    keys = {
        "viewer's read-only key": ApiKey.issue(users["viewer"], "ro", read_only=True)[1],
        "demoted viewer's read-write key": demoted_key,
    }
    return _unsafe_routes(walk(values)), users, keys


@pytest.mark.django_db
def test_it_refuses_every_unsafe_route_to_a_viewer_and_a_viewers_keys(client, roles_walk):
    routes, users, keys = roles_walk
    client.force_login(users["viewer"])
    allowed = [
        f"viewer {method} {route.url}: {response.status_code}"
        for route, method, response in _answers(
            client, routes, {}, lambda route: route.name in VIEWER_MAY
        )
        if not _refused(response, route)
    ]
    client.logout()
    for what, key in keys.items():
        header = {"Authorization": f"Bearer {key}"}
        allowed += [
            f"{what} {method} {route.url}: {response.status_code}"
            for route, method, response in _answers(
                client,
                routes,
                header,
                lambda route: not route.url.startswith("/api/") or route.name in VIEWER_MAY,
            )
            if response.status_code not in (403, 405)
        ]
    assert "\n".join(allowed) == ""
    # The walk did reach the writes: a viewer's refusal names the permission it lacks.
    refusal = client.post("/api/accounts/", headers={"Authorization": f"Bearer {keys[what]}"})
    assert refusal.json() == {
        "error": "Your role (viewer) may not do this: it needs regions.add_account"
    }


@pytest.mark.django_db
def test_it_lets_an_operator_change_silences_targets_and_acknowledgements_only(client, roles_walk):
    routes, users, _ = roles_walk
    client.force_login(users["operator"])
    wrong = []
    for route, method, response in _answers(
        client, routes, {}, lambda route: route.name in VIEWER_MAY
    ):
        may = route.name in OPERATOR_MAY or route.name.startswith(OPERATOR_ADMIN_PAGES)
        refused = _refused(response, route)
        if refused == may and response.status_code != 405:
            verdict = "refused" if refused else "allowed"
            wrong.append(f"{verdict}: {method} {route.url} {response.status_code}")
    assert wrong == []


@pytest.mark.django_db
def test_it_lets_an_admin_change_everything_the_api_and_the_pages_offer(client, roles_walk):
    routes, users, _ = roles_walk
    client.force_login(users["admin"])
    # The admin site's own refusals (read-only admins) are its design.
    refused = [
        f"{method} {route.url}: {response.content[:120]!r}"
        for route, method, response in _answers(
            client, routes, {}, lambda route: route.name.startswith("admin:")
        )
        if response.status_code == 403
    ]
    assert refused == []
