"""Fixtures shared by every test: real AWS stand-ins on loopback, users, API clients."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests judge what they find, not how fast the machine is: on two cores shared with a
# Galera cluster and a browser, drawing an input can take a second (a too_slow health check failed
# test_parse_wsrep.py's mutations so), and one example can outlast hypothesis's 200 ms deadline.
settings.register_profile("vigil", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vigil")

ROOT = Path(__file__).resolve().parents[1]
# The project's shared samples (real published mdstat, mdadm --detail, wsrep outputs and the EFS
# fact sheet), copied in from ../shared/fixtures so a clean clone tests against them too.
SHARED_FIXTURES = ROOT / "tests" / "fixtures"
assert any(SHARED_FIXTURES.glob("*/*.txt")), f"no sample outputs in {SHARED_FIXTURES}"
OUTPUT_DIR = ROOT / "test-output"

# boto3 must never find real credentials, nor ask an instance metadata service.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }
)
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)

# What a test needs beyond Python and its database, read off the fixtures it uses and the modules
# that start processes themselves. Each such test is marked with its service and with
# ``services``, so that ``make check`` can run the rest alone (``pytest -m "not services"``) and
# one can leave out one kind (``pytest -m "not galera"``).
SERVICE_FIXTURES = {
    "galera_cluster": "galera",
    "nginx": "nginx",
    "sshd": "sshd",
    "browser_page": "browser",
    "chromium": "browser",
    "hosts_entry": "hosts",
    "redis": "redis",
    "slapd": "ldap",
    "oidc_provider": "oidc",
}
SERVICE_MODULES = {
    "tests/alerts/test_rabbitmq.py": "rabbitmq",
    "tests/alerts/test_worker_faults.py": "workers",
    "tests/test_deploy.py": "compose",
    "tests/test_compose.py": "compose",
    "tests/raid/test_agent.py": "agents",
    "tests/test_agents.py": "agents",
    "tests/probes/test_command.py": "workers",
    "tests/test_run.py": "workers",
    "tests/test_first_hour.py": "workers",
}
SERVICE_MARKS = {"browser", "faults", "e2e", "deployment"}
# Slow on their own, with no service (subprocesses, schema-wide fuzzing, the whole demo fleet on
# the stand-in, big fleets on the pages): marked ``slow`` where they are (``pytestmark`` for a
# module, ``@pytest.mark.slow`` for a test), left by ``make check`` to ``make test``. Found with
# ``pytest -m "not services" --durations=30``: each took over about five seconds.


def slow_module(path: Path) -> bool:
    """Whether the test module's own ``pytestmark`` names ``pytest.mark.slow``: read from its
    syntax, without importing it."""
    import ast

    text = path.read_text(encoding="utf-8")
    if "mark.slow" not in text:
        return False
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return any(
                isinstance(part, ast.Attribute) and part.attr == "slow"
                for part in ast.walk(node.value)
            )
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With slow tests left out (``-m "... not slow"``), the modules marked slow as a whole are
    not even imported (schemathesis and the fuzz strategies alone take seconds to import)."""
    if "not slow" not in (config.getoption("markexpr") or ""):
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return True if slow_module(collection_path) else None


# ``make test`` runs the tests in two processes (pytest-xdist, ``-n 2 --dist loadgroup``). What a
# session starts once and must not start twice (the one Galera cluster on its fixed ports, the one
# chromium, the one LDAP directory and OpenID provider, podman's one store, whole Vigil stacks)
# stays in one process: each test using it joins its ``xdist_group``, and loadgroup sends a
# group's tests, one after the other, to one worker. A test's group is read off the fixtures it
# uses and its marks; tests of a module with a module-scoped fixture go together too (it is set up
# once). Two services one test uses make one group. Everything else goes where a worker is free.
EXCLUSIVE_FIXTURES = {
    "galera_cluster": "galera",
    "chromium": "browser",
    "slapd": "ldap",
    "oidc_provider": "oidc",
    "migrated_sqlite": "stack",  # make run, started by the test
}
EXCLUSIVE_MARKS = {"compose": "compose", "stack": "stack"}


def xdist_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """The xdist group of each test that needs one: the services it uses (``EXCLUSIVE_*``) and
    its module when it uses a module-scoped fixture, joined with every other test's that shares
    one of them (so that each lands in exactly one group)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keys_of: dict[pytest.Item, list[str]] = {}
    for item in items:
        keys = {
            EXCLUSIVE_FIXTURES[f]
            for f in getattr(item, "fixturenames", ())
            if f in EXCLUSIVE_FIXTURES
        }
        keys |= {EXCLUSIVE_MARKS[m.name] for m in item.iter_markers() if m.name in EXCLUSIVE_MARKS}
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info else ():
            if any(d.scope in ("module", "class", "package") and d.baseid for d in defs):
                keys.add(Path(str(item.fspath)).relative_to(ROOT).as_posix())
        if keys:
            keys_of[item] = sorted(keys)
            for key in keys_of[item]:
                parent[root(key)] = root(keys_of[item][0])
    members: dict[str, set[str]] = {}
    for key in list(parent):
        members.setdefault(root(key), set()).add(key)
    names = {top: "+".join(sorted(keys)) for top, keys in members.items()}
    return {item: names[root(keys[0])] for item, keys in keys_of.items()}


def tell_xdist_the_group(item: pytest.Item, group: str) -> None:
    """A worker of pytest-xdist 3.8 tells the controller a test's group by appending ``@group``
    to the test's node id, through a field (``_nodeid``) that pytest 9.2 no longer has: the
    groups are silently ignored (https://github.com/pytest-dev/pytest-xdist/issues/1386, open
    on 2026-11-26; the fix, pull request #1388, is not released). Done here as that fix does,
    on pytest's structured node id; a later xdist that appends it again leaves the group the same
    (the controller reads the text after the last ``@``)."""
    ident = getattr(item, "_id", None)
    if ident is not None and hasattr(type(ident), "parse"):
        item._id = type(ident).parse(f"{item.nodeid}@{group}")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = {
            SERVICE_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in SERVICE_FIXTURES
        }
        module = Path(str(item.fspath)).relative_to(ROOT).as_posix()
        if module in SERVICE_MODULES:
            needs.add(SERVICE_MODULES[module])
        marks = {mark.name for mark in item.iter_markers()}
        needs |= SERVICE_MARKS & marks
        for name in sorted(needs):
            item.add_marker(name)
        if needs:
            item.add_marker("services")
    in_loadgroup_worker = hasattr(config, "workerinput") and config.getvalue("loadgroup")
    for item, group in xdist_groups(items).items():
        item.add_marker(pytest.mark.xdist_group(group))
        if in_loadgroup_worker:
            tell_xdist_the_group(item, group)
    # The browser tests go last, together: chromium starts once (see ``_Chromium``).
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A real moto server on a free loopback port, for the whole session."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite database file with every migration applied, for ``make run`` started by a test
    (tests/services/make_run.py copies it into its var directory instead of migrating again)."""
    from tests.services import vigil_env

    var = tmp_path_factory.mktemp("migrated-var")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        cwd=ROOT,
        env=vigil_env(VIGIL_VAR_DIR=str(var), VIGIL_DEMO="false"),
        check=True,
        timeout=300,
    )
    return var / "vigil.sqlite3"


@pytest.fixture
def aws(moto_server: str, settings) -> Iterator[str]:
    """Point Vigil's client factory at the moto server, with its state reset (and EFS's
    DescribeReplicationConfigurations, which moto lacks, answered: apps/efs/demo_cloudwatch.py)."""
    from apps.efs import demo_cloudwatch
    from apps.lib import aws as aws_lib

    demo_cloudwatch.install_replications()

    request = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    # The reset walks every backend of every region: over 10 s on a loaded machine.
    urllib.request.urlopen(request, timeout=120).close()
    settings.AWS_ENDPOINT_URL = moto_server
    aws_lib.clear_cache()
    yield moto_server
    aws_lib.clear_cache()


class _AwsErrorHandler(BaseHTTPRequestHandler):
    """Answers every AWS query-protocol call with one error, as EC2 would."""

    code = "AuthFailure"
    status = 401

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error>'
            f"<Code>{self.code}</Code><Message>Refused by the test endpoint ({self.code})"
            "</Message></Error></Errors><RequestID>test</RequestID></Response>"
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_aws(settings):
    """An AWS endpoint that refuses every call with the given error code (AuthFailure by default)."""
    from apps.lib import aws as aws_lib

    servers = []

    def start(code: str = "AuthFailure", status: int = 401) -> str:
        handler = type("Handler", (_AwsErrorHandler,), {"code": code, "status": status})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_port}"
        aws_lib.clear_cache()
        return settings.AWS_ENDPOINT_URL

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
    aws_lib.clear_cache()


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


@pytest.fixture(autouse=True)
def _fresh_demo_mode() -> Iterator[None]:
    from apps.demo.mode import demo_enabled

    demo_enabled.cache_clear()
    yield
    demo_enabled.cache_clear()


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


@pytest.fixture
def user(django_user_model):
    """The on-call engineer most tests act as: an admin (in the Admin group, not a superuser),
    since most tests exercise what Vigil does, not who may do it (tests/accounts/test_roles.py
    and the URL-conf walk in tests/test_security.py do that, with ``viewer`` and ``operator``)."""
    return make_user(django_user_model, "oncall", "admin")


@pytest.fixture
def viewer(django_user_model):
    """A user with no group and no staff flag: a viewer."""
    return make_user(django_user_model, "viewer", None)


@pytest.fixture
def operator(django_user_model):
    return make_user(django_user_model, "operator", "operator")


@pytest.fixture
def logged_in_client(client, user):
    client.force_login(user)
    return client


ADMIN_PASSWORD = "s3cret-pass-word"


@pytest.fixture
def admin(django_user_model):
    """A superuser, as the browser tests log in (``log_in``, password ``ADMIN_PASSWORD``)."""
    return django_user_model.objects.create_superuser("admin", "admin@example.com", ADMIN_PASSWORD)


@contextmanager
def demo_account_on_standin(settings) -> Iterator[object]:
    """The demo account with its regions discovered, on an AWS stand-in of its own (moto's state
    reset first, as a new ``make run`` finds it) that Vigil's clients use for the block."""
    from apps.demo import mode
    from apps.demo.standin import AwsStandIn
    from apps.lib import aws
    from apps.regions import tasks
    from apps.regions.models import Account

    with AwsStandIn() as url:
        urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"))
        settings.AWS_ENDPOINT_URL = url
        aws.clear_cache()
        mode.ensure_demo_account(True)
        account = Account.objects.get(is_demo=True)
        tasks.discover_regions(account.pk)
        yield account
    aws.clear_cache()


@pytest.fixture
def collected_demo(settings) -> tuple[int, int]:
    """The demo's EFS fleet discovered and collected once in us-east-1, on its own stand-in:
    (the region's pk, the pk of the file system ``demo-builds-primary``)."""
    from apps.efs import demo, tasks
    from apps.efs.models import FileSystem, RegionCollection

    with demo_account_on_standin(settings) as account:
        demo.set_up()
        region = account.regions.get(code="us-east-1")
        rc = RegionCollection.objects.create(region=region)
        tasks.collect_region(rc.pk, region=region.code)
    return region.pk, FileSystem.objects.get(name="demo-builds-primary").pk


@pytest.fixture
def site(db):
    """A site outside AWS, where most concerns' subjects live in the tests."""
    from apps.regions.models import Region

    return Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")


def bearer(raw: str) -> dict[str, str]:
    """The test client's headers for an API key."""
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def api_key(user):
    """``api_key(read_only=True)`` → the raw key of a fresh key for ``user``."""
    from apps.accounts.models import ApiKey

    def issue(read_only: bool = True) -> str:
        return ApiKey.issue(user, "test key", read_only=read_only)[1]

    return issue


@pytest.fixture
def writer(api_client, api_key):
    """An API client holding a fresh read-write key of ``user``."""
    api_client.credentials(**bearer(api_key(read_only=False)))
    return api_client


HOSTS_FILE = Path("/etc/hosts")
HOSTS_LOCK = Path("/tmp/vigil-tests-etc-hosts.lock")


def _rewrite_hosts(change: Callable[[list[str]], list[str]]) -> None:
    """Rewrite /etc/hosts through ``change`` (its lines), under a lock other test runs share,
    atomically where the file can be replaced (else in place: a container's bind mount)."""
    import fcntl
    import tempfile

    with HOSTS_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = change(HOSTS_FILE.read_text().splitlines())
        text = "\n".join(lines) + "\n"
        fd, temporary = tempfile.mkstemp(dir=HOSTS_FILE.parent, prefix=".hosts-vigil-")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(text)
            os.chmod(temporary, HOSTS_FILE.stat().st_mode & 0o777)
            os.replace(temporary, HOSTS_FILE)
        except OSError:
            os.unlink(temporary)
            HOSTS_FILE.write_text(text)


@pytest.fixture
def hosts_entry() -> Iterator[Callable[[str], str]]:
    """``point(address)`` → a name of this test's own that resolves to ``address`` (through
    /etc/hosts: there is no DNS server here); calling it again repoints the same name, as a DNS
    record changed between save and connect would. Only our own line is ever touched."""
    import uuid

    name = f"vigil-test-{uuid.uuid4().hex[:12]}.example"
    marker = f"# vigil test {name}"

    def without_ours(lines: list[str]) -> list[str]:
        return [line for line in lines if not line.endswith(marker)]

    def point(address: str, label: str = "") -> str:
        """``label`` (an A-label such as ``xn--fa-hia``) goes in front of the name."""
        full = f"{label}.{name}" if label else name
        _rewrite_hosts(lambda lines: [*without_ours(lines), f"{address} {full} {marker}"])
        return full

    yield point
    _rewrite_hosts(without_ours)


@pytest.fixture
def redis(tmp_path) -> Iterator[object]:
    """A private redis-server on a free port (tests/services/workers.py): stopping it disturbs
    nobody else."""
    from tests.services.workers import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker(redis) -> Iterator[object]:
    """A Celery client on ``redis``: the test publishes what beat would (a sweep, a tick)."""
    from celery import Celery

    client = Celery("tests", broker=redis.url, set_as_current=False)  # shared tasks stay ours
    yield client
    client.close()


@pytest.fixture
def responder(aws) -> Iterator[object]:
    """moto's GetMetricData answered, for tagged file systems, by the synthetic fleet that
    enforces EFS's limits (apps/efs/demo_cloudwatch.py)."""
    from apps.efs import demo_cloudwatch

    installed = demo_cloudwatch.install(demo_cloudwatch.FleetResponder())
    try:
        yield installed
    finally:
        demo_cloudwatch.uninstall()


@pytest.fixture(scope="session")
def galera_cluster():
    """A real 3-node MariaDB Galera cluster plus garbd, started once per test session
    (tests/services/galera.py; ``TEST_GALERA_PORT`` moves its ports)."""
    from tests.services.galera import GaleraCluster

    cluster = GaleraCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.teardown()


@pytest.fixture
def galera(galera_cluster):
    """The cluster with 3 Synced nodes and garbd, whatever an earlier test left behind."""
    galera_cluster.ensure_healthy()
    return galera_cluster


# --- The browser: one Debian chromium for the whole session, a fresh context per test ------

CHROMIUM = "/usr/bin/chromium"
# Without these, chromium keeps trying to reach Google's hosts from a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Chromium:
    """The one chromium, started by the first test that asks for it and stopped after the last
    of a run of such tests: Playwright's sync API keeps its event loop running in this thread
    while it is open, and asyncio.run() refuses to start under it (the probes' tests use it)."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self) -> object:
        if self.browser is None:
            from playwright.sync_api import sync_playwright

            # Playwright's sync API runs an event loop in this thread; the ORM is not used meanwhile.
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS
            )
        return self.browser

    def stop(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
            if self.playwright is not None:
                self.playwright.stop()
        finally:
            self.browser = self.playwright = None
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


_CHROMIUM = _Chromium()


@pytest.fixture
def chromium() -> object:
    """The one chromium of this process (starting one costs about a second and 150 MB); each
    test gets its own context (cookies, storage) from ``browser_page``. The browser tests go
    together (last in a serial run, one group under xdist), so it starts once."""
    return _CHROMIUM.get()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the test's own teardown (its browser context closed): chromium stops unless the
    next test of this process uses it too."""
    try:
        return (yield)
    finally:
        if "chromium" in getattr(item, "fixturenames", ()) and (
            nextitem is None or "chromium" not in getattr(nextitem, "fixturenames", ())
        ):
            _CHROMIUM.stop()


@pytest.fixture
def browser_page(chromium) -> Iterator[object]:
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def demo_in_chromium(admin, collected_demo, browser_page) -> tuple[object, int, int]:
    """The collected demo (``collected_demo``) and a browser page for ``admin``: (the page, the
    region's pk, the file system's pk). The database is set up before the browser starts: no
    ORM once it runs, see tests/test_browser.py."""
    return browser_page, *collected_demo


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


AXE_DIR = ROOT / "tests" / "js"


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, from tests/js (``npm ci`` there, as ``make test`` does, if missing)."""
    from tests.services import npm_ci

    npm_ci("axe-core/axe.min.js")
    return (AXE_DIR / "node_modules" / "axe-core" / "axe.min.js").read_text()


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


@pytest.fixture(scope="session")
def slapd() -> Iterator[object]:
    """Debian's slapd on loopback with a small directory and a CA of its own (one per session;
    a test that changes a group puts it back)."""
    from tests.services.slapd import Slapd

    server = Slapd().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def oidc_provider(live_server) -> Iterator[object]:
    """oidc-provider (Node.js) on loopback, its client's redirect pointing at the live server."""
    from tests.services.oidc import OidcProvider

    provider = OidcProvider(live_server.url).start()
    try:
        yield provider
    finally:
        provider.stop()
