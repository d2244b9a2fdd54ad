"""What test modules share that is not a fixture: the repository's paths, the test client's
API key headers, Celery run eagerly, a user of a role, the demo account on its stand-in, the
browser's log-in and screenshots, sign-in settings. Fixtures are in tests/plugins/ (registered
by tests/conftest.py); import these from here, never from a conftest."""

from __future__ import annotations

import ast
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The project's shared samples (real published mdstat, mdadm --detail, wsrep outputs and the EFS
# fact sheet), copied in from ../shared/fixtures so a clean clone tests against them too.
SHARED_FIXTURES = ROOT / "tests" / "fixtures"
assert any(SHARED_FIXTURES.glob("*/*.txt")), f"no sample outputs in {SHARED_FIXTURES}"
OUTPUT_DIR = ROOT / "test-output"
AXE_DIR = ROOT / "tests" / "js"


@cache
def parsed(path: Path) -> ast.Module:
    """A module of ours as a syntax tree, read once per test process: the tests of the code's
    shape (``test_sizes``, ``test_imports``, ``test_shape``) read the same files."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement in ``tree`` at any depth, outer first, without walking the expressions,
    where no ``def``, ``class`` or ``import`` can be (ten times fewer nodes than ``ast.walk``)."""
    blocks = [tree]
    while blocks:
        node = blocks.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for child in block:
                    if isinstance(child, ast.stmt):
                        yield child
                    blocks.append(child)


def bearer(raw: str) -> dict[str, str]:
    """The test client's headers for an API key."""
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@contextmanager
def eager_celery() -> Iterator[None]:
    """Celery tasks run at once, in this process, for the block (``task_always_eager``)."""
    import importlib

    app = importlib.import_module("config.celery_app").app  # config's ``celery_app`` is the app
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = False


def make_user(django_user_model, username: str, role: str | None) -> object:
    """A user with the role's group (None: no group at all, which is a viewer)."""
    from django.contrib.auth.models import Group

    from apps.accounts.roles import GROUPS

    made = django_user_model.objects.create_user(
        username, f"{username}@example.com", "correct horse"
    )
    if role is not None:
        made.groups.add(Group.objects.get(name=GROUPS[role]))
    return made


ADMIN_PASSWORD = "s3cret-pass-word"


@contextmanager
def demo_account_on_standin(settings) -> Iterator[object]:
    """The demo account with its regions discovered, on an AWS stand-in of its own (moto's state
    reset first, as a new ``make run`` finds it) that Vigil's clients use for the block."""
    from apps.demo.standin import AwsStandIn
    from apps.lib import aws
    from apps.regions import demo, tasks
    from apps.regions.models import Account

    with AwsStandIn() as url:
        urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"))
        settings.AWS_ENDPOINT_URL = url
        aws.clear_cache()
        demo.ensure_demo_account(True)
        account = Account.objects.get(is_demo=True)
        tasks.discover_regions(account.pk)
        yield account
    aws.clear_cache()


def log_in(
    page, base_url: str, then: str = "", username: str = "admin", password: str = ADMIN_PASSWORD
) -> None:
    """Log the browser page in through the login form (as ``admin`` unless told), then on to
    the page ``then``."""
    page.goto(f"{base_url}/accounts/login/" + (f"?next={then}" if then else ""))
    page.fill("#id_login", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def screenshot(page, name: str) -> None:
    """The whole page as test-output/``name``, for a person to look at."""
    path = OUTPUT_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)


def configure_sign_in(settings, **values: object) -> None:
    """Turn on sign-in ways for a test as the environment would: ``values`` are VIGIL_* settings
    of apps/accounts/conf.py, turned into allauth's and django-auth-ldap's settings by it."""
    from apps.accounts import conf

    merged = {s.name: getattr(settings, s.name) for s in conf.SETTINGS} | values
    for name, value in (merged | conf.sign_in_settings(merged)).items():
        setattr(settings, name, value)
    policy = settings.CONTENT_SECURITY_POLICY
    directives = policy["DIRECTIVES"]
    form_action = ["'self'", *conf.form_targets(merged)]
    settings.CONTENT_SECURITY_POLICY = {
        **policy,
        "DIRECTIVES": {**directives, "form-action": form_action},
    }
    ldap = "apps.accounts.directory.LDAPBackend"
    backends = [b for b in settings.AUTHENTICATION_BACKENDS if b != ldap]
    settings.AUTHENTICATION_BACKENDS = backends + (
        [ldap] if merged["VIGIL_LDAP_SERVER_URI"] else []
    )
