"""docker-compose.yml run for real: the image built from the Dockerfile, every service started by
docker-compose on podman, and what a team deploying Vigil relies on checked from outside.

The images the compose file names come from a registry this machine cannot reach, so the test
builds stand-ins from Debian packages (``tests/services/podman.py``): the Dockerfile's base
(``BASE_IMAGE``) is Debian bookworm's Python 3.11, and ``tests/compose/override.yml`` swaps in
Debian's PostgreSQL and Redis. Everything else is the production files as they are.
"""

from __future__ import annotations

import html
import logging
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.services import free_port, wait_for
from tests.services import podman as containers

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)

OVERRIDE = ROOT / "tests" / "compose" / "override.yml"
VIGIL_IMAGE = f"{containers.PREFIX}/vigil:compose"
WORKERS = ("worker", "probes-worker")
ADMIN = "first-admin"  # not the default "admin": .env's value must reach the containers


@contextmanager
def step(name: str) -> Iterator[None]:
    """Log how long a step took (``--log-cli-level=INFO`` shows them as they end)."""
    started = time.monotonic()
    yield
    log.info("%s: %.0f s", name, time.monotonic() - started)


@dataclass
class Stack:
    """One compose project of ours: ``compose(...)`` runs docker-compose on it."""

    podman: containers.Podman
    project: str
    env: dict[str, str]
    port: int
    admin_password: str
    directory: Path

    def compose(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        command = [
            *containers.compose_command(),
            "--project-name",
            self.project,
            # Where its .env is read from (never a .env of the checkout).
            "--project-directory",
            str(self.directory),
            "--file",
            str(ROOT / "docker-compose.yml"),
            "--file",
            str(OVERRIDE),
            *args,
        ]
        result = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
        assert result.returncode == 0, (
            f"docker-compose {' '.join(args)}:\n{result.stderr[-4000:]}\n{self.all_logs()}"
        )
        return result

    def all_logs(self, lines: int = 40) -> str:
        """The end of every container's log, for a failure's message."""
        found = containers.project_objects(self.podman, self.project)["containers"]
        return "\n".join(
            f"--- {c}:\n" + "\n".join(containers.logs(self.podman, c).splitlines()[-lines:])
            for c in found
        )

    def up(self) -> None:
        # Builds nothing: the image was built from the Dockerfile with the test's base.
        with containers.HealthChecks(self.podman, self.project):
            self.compose("up", "--detach", "--no-build")

    def container(self, service: str) -> str:
        listed = self.podman.run(
            "ps",
            "--all",
            "--filter",
            f"label=com.docker.compose.project={self.project}",
            "--filter",
            f"label=com.docker.compose.service={service}",
            "--format",
            "{{.Names}}",
        ).stdout.split()
        assert len(listed) == 1, f"{service}: {listed}"
        return listed[0]

    def logs(self, service: str) -> str:
        return containers.logs(self.podman, self.container(service))

    def sql(self, query: str) -> str:
        return self.podman.run(
            "exec", self.container("postgres"), "psql", "-U", "vigil", "-d", "vigil", "-Atc", query
        ).stdout.strip()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture(scope="module")
def podman(tmp_path_factory) -> containers.Podman:
    return containers.Podman(tmp_path_factory.mktemp("podman"))


@pytest.fixture(scope="module")
def images(podman) -> dict[str, str]:
    """The stand-in images (cached by their inputs), then Vigil's from the Dockerfile."""
    with step("stand-in images"):
        base = containers.debian_base(podman)
        python, postgres, redis = (
            containers.stand_in(podman, name, base) for name in containers.STAND_INS
        )
    with step("Vigil's image"):
        containers.build_vigil(podman, ROOT, VIGIL_IMAGE, python)
    return {"vigil": VIGIL_IMAGE, "postgres": postgres, "redis": redis}


def write_env_file(path: Path, values: dict[str, str]) -> None:
    """``.env`` as docs/production.md says to make it: .env.example, with some values set."""
    lines = []
    for line in (ROOT / ".env.example").read_text().splitlines():
        name = line.partition("=")[0]
        lines.append(f"{name}={values.pop(name)}" if name in values else line)
    path.write_text("\n".join([*lines, *(f"{k}={v}" for k, v in values.items())]) + "\n")


@pytest.fixture
def stack(podman, images, tmp_path) -> Iterator[Stack]:
    project = f"vigiltest{secrets.token_hex(4)}"
    port = free_port()
    admin_password = secrets.token_urlsafe(16)
    write_env_file(
        tmp_path / ".env",
        {
            "SECRET_KEY": secrets.token_urlsafe(48),
            "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
            # Read from .env by the migrate service alone (compose names only the password).
            "VIGIL_ADMIN_USERNAME": ADMIN,
            "VIGIL_ADMIN_PASSWORD": admin_password,
            "VIGIL_WEB_PORT": str(port),
            "VIGIL_BASE_URL": f"http://127.0.0.1:{port}",
            # The probe below measures the web service by its name on the compose network.
            "ALLOWED_HOSTS": "localhost,127.0.0.1,web.vigil.test",
            # Plain HTTP here, no TLS proxy in front: the session cookie must come back.
            "SESSION_COOKIE_SECURE": "false",
            "VIGIL_PROXY_COUNT": "0",
        },
    )
    with containers.api_service(podman, tmp_path) as docker_host:
        env = {
            **containers.compose_environment(docker_host),
            "COMPOSE_TEST_VIGIL_IMAGE": images["vigil"],
            "COMPOSE_TEST_POSTGRES_IMAGE": images["postgres"],
            "COMPOSE_TEST_REDIS_IMAGE": images["redis"],
        }
        stack = Stack(podman, project, env, port, admin_password, tmp_path)
        try:
            yield stack
        finally:
            try:
                stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "10")
            finally:
                containers.remove_project(podman, project)
    assert containers.project_objects(podman, project) == {
        "containers": [],
        "volumes": [],
        "networks": [],
    }


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, list[str]]:
    """Status, body and Set-Cookie headers, without following redirects."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=10) as response:
            return (
                response.status,
                response.read().decode(),
                response.headers.get_all("Set-Cookie", []),
            )
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace"), exc.headers.get_all("Set-Cookie", [])


def cookie(set_cookies: list[str], name: str) -> str:
    for header in set_cookies:
        key, _, rest = header.partition("=")
        if key.strip() == name:
            return rest.split(";", 1)[0]
    raise AssertionError(f"no {name} cookie in {set_cookies}")


def log_in(stack: Stack, username: str, password: str) -> str:
    """Through the login page on the published port; the session cookie."""
    status, page, cookies = get(stack.url("/accounts/login/"))
    assert status == 200 and 'name="password"' in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    csrf = cookie(cookies, "csrftoken")
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": html.unescape(token), "login": username, "password": password}
    ).encode()
    request = urllib.request.Request(
        stack.url("/accounts/login/"),
        data=form,
        headers={
            "Cookie": f"csrftoken={csrf}",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    try:
        urllib.request.build_opener(NoRedirect).open(request, timeout=10)
        raise AssertionError("the login page answered the login with a page, not a redirect")
    except urllib.error.HTTPError as exc:
        assert exc.code == 302, exc.read()[:2000]
        return cookie(exc.headers.get_all("Set-Cookie", []), "sessionid")


def assert_migrated_once(stack: Stack, first: bool) -> None:
    """The one-shot migrate service ran to its end, and only it migrated."""
    state = stack.podman.inspect(stack.container("migrate"))[0]["State"]
    assert state["Status"] == "exited" and state["ExitCode"] == 0
    migrate = stack.logs("migrate")
    if first:
        assert "Applying accounts.0001_initial... OK" in migrate
        assert "Created the first admin user" in migrate
    else:
        assert "No migrations to apply." in migrate
        assert "Created the first admin user" not in migrate
    for service in ("web", *WORKERS, "beat"):
        assert "Applying " not in stack.logs(service), service
    # Each migration recorded once, and all of them: none is left to make or apply.
    twice = "select app, name from django_migrations group by app, name having count(*) > 1"
    assert stack.sql(twice) == ""


def assert_web_answers_on_loopback_only(stack: Stack) -> None:
    """/healthz and the login page through the published port; published on 127.0.0.1 alone."""
    wait_for(
        lambda: get(stack.url("/healthz"))[0] == 200,
        120,
        "/healthz on the published port",
        interval=1,
        retry_on=(OSError,),
    )
    assert get(stack.url("/healthz"))[1] == "ok"
    status, page, _ = get(stack.url("/accounts/login/"))
    assert status == 200 and 'name="login"' in page
    published = {}
    for service in ("migrate", "web", *WORKERS, "beat", "postgres", "redis"):
        ports = stack.podman.inspect(stack.container(service))[0]["HostConfig"]["PortBindings"]
        for container_port, bindings in (ports or {}).items():
            if bindings:  # an EXPOSEd port that is not published has none
                published[(service, container_port)] = [
                    (b["HostIp"], b["HostPort"]) for b in bindings
                ]
    assert published == {("web", "8000/tcp"): [("127.0.0.1", str(stack.port))]}


def assert_every_service_is_healthy(stack: Stack) -> None:
    """Each healthcheck of the compose file, run in its container, passes: as an engine judges
    it, a container is unhealthy only after ``retries`` failures in a row (a worker of 20
    processes may still be starting on a busy machine when ``up`` returns)."""
    for service in ("web", *WORKERS, "postgres", "redis"):
        config = stack.podman.inspect(stack.container(service))[0]["Config"]
        retries = (config.get("Healthcheck") or {}).get("Retries") or 3
        for attempt in range(retries):
            result = stack.podman.run("healthcheck", "run", stack.container(service), check=False)
            if result.returncode == 0:
                break
            if attempt < retries - 1:
                time.sleep(5)
        assert result.returncode == 0, f"{service}: {result.stdout}{result.stderr}"
        health = stack.podman.inspect(stack.container(service))[0]["State"]["Health"]
        assert health["Status"] == "healthy", service
    # Not the image's HEALTHCHECK, which asks a web server they do not run.
    for service in ("beat", "migrate"):
        config = stack.podman.inspect(stack.container(service))[0]["Config"]
        assert (config.get("Healthcheck") or {}).get("Test", ["NONE"]) == ["NONE"], service


def add_probe_of_the_web_service(stack: Stack) -> int:
    code = (
        "from apps.regions.models import Region\n"
        "from apps.probes.models import Target\n"
        "site, _ = Region.objects.get_or_create(kind='site', code='compose', account=None)\n"
        "target = Target(name='web', url='http://web.vigil.test:8000/healthz', region=site, cap_s=30)\n"
        "target.full_clean()\n"
        "target.save()\n"
        "print(target.pk)\n"
    )
    result = stack.podman.run(
        "exec", stack.container("web"), "python", "manage.py", "shell", "-c", code, timeout=120
    )
    return int(result.stdout.split()[-1])


def assert_beat_queues_what_the_right_worker_runs(stack: Stack, target: int) -> None:
    """The beat's tick goes to the default queue's worker, whose dispatch queues the probe on
    ``probes``, which only the probes-worker consumes; the result is saved."""
    wait_for(
        lambda: stack.sql(f"select count(*) from probes_result where target_id = {target}") != "0",
        180,
        "a probe result saved by the probes-worker",
        interval=2,
    )
    assert "Sending due task dispatch-due-work" in stack.logs("beat")
    worker, probes_worker = stack.logs("worker"), stack.logs("probes-worker")
    assert re.search(r"Task apps\.regions\.tasks\.dispatch\[[^]]+\] succeeded", worker)
    assert re.search(r"Task apps\.probes\.tasks\.run_probes\[[^]]+\] succeeded", probes_worker)
    # (Each worker's banner lists every task; these are the lines of tasks it received.)
    assert "Task apps.probes.tasks.run_probes[" not in worker
    assert "Task apps.regions.tasks.dispatch[" not in probes_worker
    status_code = stack.sql(f"select status_code from probes_result where target_id = {target}")
    assert status_code.splitlines()[0] == "200"


def test_it_runs_the_compose_file_and_keeps_its_data_through_down_and_up(stack):
    with step("up"):
        stack.up()
    with step("checks"):
        assert_migrated_once(stack, first=True)
        assert_web_answers_on_loopback_only(stack)
    with step("healthchecks"):
        assert_every_service_is_healthy(stack)
    with step("login"):
        session = log_in(stack, ADMIN, stack.admin_password)
        status, page, _ = get(stack.url("/"), {"Cookie": f"sessionid={session}"})
        assert status == 200 and ADMIN in page
    with step("beat to probes-worker"):
        target = add_probe_of_the_web_service(stack)
        assert_beat_queues_what_the_right_worker_runs(stack, target)
    stack.podman.run(
        "exec", stack.container("redis"), "redis-cli", "-n", "2", "set", "kept", "across down"
    )
    results = int(stack.sql("select count(*) from probes_result"))

    with step("down"):
        stack.compose("down", "--timeout", "10")
    left = containers.project_objects(stack.podman, stack.project)
    assert left["containers"] == [] and len(left["volumes"]) == 2
    with step("up again"):
        stack.up()

    with step("checks again"):
        assert_migrated_once(stack, first=False)
    # What the first run wrote is there (the web itself was proven above; booting it again
    # would prove nothing more about the volumes).
    assert stack.sql("select username from auth_user where is_superuser") == ADMIN
    assert int(stack.sql(f"select count(*) from probes_result where target_id = {target}")) >= 1
    assert int(stack.sql("select count(*) from probes_result")) >= results
    kept = stack.podman.run("exec", stack.container("redis"), "redis-cli", "-n", "2", "get", "kept")
    assert kept.stdout.strip() == "across down"
