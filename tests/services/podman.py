"""Real containers for the compose test: Debian's podman (rootful, runc, cgroupfs, netavark),
images built from Debian packages, and podman's Docker API for docker-compose.

No image registry is reachable here, so the base images are made from the Debian mirror:
``debootstrap`` a minimal bookworm, ``podman import`` it, then build the stand-ins of the images
the Dockerfile and docker-compose.yml name (``tests/compose/<name>/Containerfile``: Python 3.11,
PostgreSQL, Redis) on it. Each is tagged with a hash of what it is made from and kept in
podman's store (``/var/lib/containers``), so only the first run on a machine pays debootstrap;
a changed input makes a new tag, and the one it replaces goes. Podman reads its settings from our own ``containers.conf``
(``CONTAINERS_CONF``), never the machine's: the runtime, the cgroup manager and file and
process limits below this machine's (runc refuses limits above its own).

Without systemd podman schedules no healthchecks, so ``HealthChecks`` runs them as an engine
would (``podman healthcheck run``: the container's own check, in the container) while a
project starts; compose's ``service_healthy`` reads the result.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.services import wait_for

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "tests" / "compose"
PODMAN = shutil.which("podman") or "/usr/bin/podman"
DEBOOTSTRAP = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
DEBIAN_SUITE = "bookworm"  # python:3.11-slim-bookworm's Debian; its Python is 3.11 too
DEBIAN_MIRROR = "http://deb.debian.org/debian"
# As in Debian's own container images: a package's install never starts its service.
POLICY_RC_D = "#!/bin/sh\nexit 101\n"
# Our tags: everything the tests make is named so, and nothing else is ever removed.
PREFIX = "localhost/vigil-test"
# A crashed run's base build never blocks the next: the lock dies with its process.
LOCK = Path(tempfile.gettempdir()) / "vigil-test-images.lock"


def containers_conf(directory: Path) -> Path:
    """Our podman settings, with file and process limits under this machine's hard ones."""
    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 8192)
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 8192)
    path = directory / "containers.conf"
    path.write_text(
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        "[engine]\n"
        'runtime = "runc"\n'
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        "[network]\n"
        'network_backend = "netavark"\n'
    )
    return path


class Podman:
    """``podman`` with our settings; ``run`` raises with podman's own words on failure."""

    def __init__(self, directory: Path) -> None:
        self.env = {**os.environ, "CONTAINERS_CONF": str(containers_conf(directory))}

    def run(
        self, *args: str, timeout: float = 120, check: bool = True, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [PODMAN, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"podman {' '.join(args[:3])} failed ({result.returncode}):\n"
                f"{result.stderr[-3000:]}{result.stdout[-2000:]}"
            )
        return result

    def exists(self, image: str) -> bool:
        return self.run("image", "exists", image, check=False).returncode == 0

    def inspect(self, *names: str) -> list[dict]:
        return json.loads(self.run("inspect", *names).stdout)

    def build(
        self, context: Path, tag: str, args: dict[str, str], containerfile: Path | None = None
    ) -> None:
        """Build in the Docker image format, which keeps ``HEALTHCHECK``, with layers cached as
        ``docker build`` caches them; steps reach apt and PyPI through podman's bridge, never
        this machine's loopback services."""
        build_args = [f"--build-arg={name}={value}" for name, value in args.items()]
        file = ["--file", str(containerfile)] if containerfile else []
        self.run(
            "build",
            "--format=docker",
            "--layers",
            *build_args,
            *file,
            "--tag",
            tag,
            str(context),
            timeout=1800,
        )


def _digest(*parts: str | bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode() if isinstance(part, str) else part)
        hasher.update(b"\0")
    return hasher.hexdigest()[:12]


def _folder_digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return _digest(*(f"{p.relative_to(folder)}\n".encode() + p.read_bytes() for p in files))


@contextmanager
def _images_lock() -> Iterator[None]:
    """One builder at a time on this machine (another checkout's tests may build the same)."""
    with LOCK.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


STAND_INS = ("python", "postgres", "redis")  # tests/compose/<name>/Containerfile


def debian_base(podman: Podman) -> str:
    """A minimal Debian bookworm from the mirror, imported as an image (built once)."""
    key = _digest(DEBIAN_SUITE, DEBIAN_MIRROR, "minbase", POLICY_RC_D)
    tag = f"{PREFIX}/debian:{DEBIAN_SUITE}-{key}"
    with _images_lock():
        if podman.exists(tag):
            return tag
        with tempfile.TemporaryDirectory(prefix="vigil-debootstrap-", dir="/var/tmp") as tmp:
            rootfs = Path(tmp) / "rootfs"
            subprocess.run(
                [DEBOOTSTRAP, "--variant=minbase", DEBIAN_SUITE, str(rootfs), DEBIAN_MIRROR],
                check=True,
                capture_output=True,
                timeout=1200,
            )
            shutil.rmtree(rootfs / "var" / "cache" / "apt" / "archives", ignore_errors=True)
            policy = rootfs / "usr" / "sbin" / "policy-rc.d"
            policy.write_text(POLICY_RC_D)
            policy.chmod(0o755)
            tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
            imported = subprocess.run(
                [PODMAN, "import", "--change", 'CMD ["bash"]', "-", tag],
                stdin=tar.stdout,
                env=podman.env,
                capture_output=True,
                timeout=600,
            )
            tar.stdout.close()
            tar.wait()
            if imported.returncode != 0 or tar.returncode != 0:
                raise RuntimeError(f"podman import failed: {imported.stderr.decode()[-2000:]}")
        remove_other_tags(podman, tag)
    return tag


def host_ca_certificates() -> bytes:
    """The CA bundle this machine trusts (``SSL_CERT_FILE``, else Debian's)."""
    path = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    return Path(path).read_bytes()


def stand_in(podman: Podman, name: str, base: str) -> str:
    """``tests/compose/<name>/``'s image on ``base``, with this machine's CA bundle in its
    context (``host-ca-certificates.crt``), tagged by all three (built once)."""
    folder = IMAGES / name
    certificates = host_ca_certificates()
    key = _digest(base, _folder_digest(folder), certificates)
    tag = f"{PREFIX}/{name}:{DEBIAN_SUITE}-{key}"
    with _images_lock():
        if podman.exists(tag):
            return tag
        with tempfile.TemporaryDirectory(prefix="vigil-image-") as tmp:
            context = Path(tmp) / name
            shutil.copytree(folder, context)
            (context / "host-ca-certificates.crt").write_bytes(certificates)
            podman.build(context, tag, {"BASE_IMAGE": base})
        remove_other_tags(podman, tag)
    return tag


def remove_other_tags(podman: Podman, tag: str) -> None:
    """Our images of the same name made from other inputs: replaced, so they go (one still in
    use by a container stays; podman refuses)."""
    repository = tag.rpartition(":")[0]
    listed = podman.run("images", "--format", "{{.Repository}}:{{.Tag}}", repository, check=False)
    for other in listed.stdout.split():
        if other != tag and other.startswith(f"{PREFIX}/"):
            podman.run("rmi", other, check=False)


def _image_id(podman: Podman, image: str) -> str:
    found = podman.run("image", "inspect", "--format", "{{.Id}}", image, check=False)
    return found.stdout.strip() if found.returncode == 0 else ""


def build_vigil(podman: Podman, context: Path, tag: str, base: str) -> None:
    """The Dockerfile in ``context`` on ``base``; the image ``tag`` named before goes, so
    rebuilds leave no untagged images behind (its cached layers stay while still used)."""
    before = _image_id(podman, tag)
    podman.build(context, tag, {"BASE_IMAGE": base}, context / "Dockerfile")
    if before and before != _image_id(podman, tag):
        podman.run("rmi", before, check=False)


@contextmanager
def api_service(podman: Podman, directory: Path) -> Iterator[str]:
    """podman's Docker-compatible API on a socket of ours; yields its ``DOCKER_HOST``."""
    socket_path = directory / "podman.sock"
    log = (directory / "podman-service.log").open("w")
    process = subprocess.Popen(
        [PODMAN, "system", "service", "--time=0", f"unix://{socket_path}"],
        env=podman.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(socket_path.exists, 30, "podman's API socket", interval=0.2)
        yield f"unix://{socket_path}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


class HealthChecks:
    """While a compose project starts: each of its containers' healthchecks run at the check's
    own interval from the container's start, as the Docker engine's scheduler runs them (so its
    ``retries`` and ``start_period`` mean what they mean there)."""

    def __init__(self, podman: Podman, project: str) -> None:
        self.podman = podman
        self.project = project
        self._due: dict[str, float] = {}  # container id -> monotonic time of its next check
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> HealthChecks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            now = time.monotonic()
            for container in self._running():
                if container not in self._due:
                    self._due[container] = now + self._interval(container)
                elif now >= self._due[container]:
                    self.podman.run("healthcheck", "run", container, check=False, timeout=120)
                    self._due[container] = time.monotonic() + self._interval(container)

    def _running(self) -> list[str]:
        label = f"label=com.docker.compose.project={self.project}"
        listed = self.podman.run("ps", "--filter", label, "--format", "{{.ID}}", check=False)
        return listed.stdout.split()

    def _interval(self, container: str) -> float:
        found = self.podman.run("inspect", container, check=False)
        if found.returncode != 0:
            return 3600.0
        check = json.loads(found.stdout)[0]["Config"].get("Healthcheck") or {}
        if not check.get("Test") or check["Test"] == ["NONE"]:
            return 3600.0
        return (check.get("Interval") or 30_000_000_000) / 1e9


def project_objects(podman: Podman, project: str) -> dict[str, list[str]]:
    """The containers, volumes and networks that compose made for ``project`` (its label)."""
    label = f"label=com.docker.compose.project={project}"
    found = {}
    for kind, listing in (
        ("containers", ["ps", "--all", "--filter", label, "--format", "{{.ID}}"]),
        ("volumes", ["volume", "ls", "--filter", label, "--format", "{{.Name}}"]),
        ("networks", ["network", "ls", "--filter", label, "--format", "{{.Name}}"]),
    ):
        result = podman.run(*listing, check=False)
        found[kind] = result.stdout.split()
    return found


def remove_project(podman: Podman, project: str) -> None:
    """Whatever is left of ``project`` after compose's own ``down``: its containers first."""
    found = project_objects(podman, project)
    if found["containers"]:
        podman.run("rm", "--force", "--time=5", *found["containers"], check=False, timeout=300)
    if found["volumes"]:
        podman.run("volume", "rm", "--force", *found["volumes"], check=False)
    if found["networks"]:
        podman.run("network", "rm", "--force", *found["networks"], check=False)


def logs(podman: Podman, container: str) -> str:
    result = podman.run("logs", container, check=False, timeout=60)
    return result.stdout + result.stderr


def compose_command() -> Sequence[str]:
    """Debian's docker-compose (1.29), which talks to podman's Docker API."""
    return [shutil.which("docker-compose") or "/usr/bin/docker-compose"]


def compose_environment(docker_host: str) -> dict[str, str]:
    """docker-compose's environment: none of this process's settings or Docker variables."""
    kept = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    return {**{k: os.environ[k] for k in kept if k in os.environ}, "DOCKER_HOST": docker_host}
