"""What a production install and a new user read: the compose file and .env.example."""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.helpers import ROOT


def compose_command() -> list[str]:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    return [shutil.which("docker-compose") or "docker-compose"]


def test_it_has_a_compose_file_that_docker_compose_parses(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DATABASE_URL", "VIGIL_WEB_BIND", "VIGIL_WEB_PORT"}
    }
    # As docs/production.md says to start: .env copied from .env.example beside the compose file.
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    result = subprocess.run(
        [
            *compose_command(),
            "--project-directory",
            str(tmp_path),
            "-f",
            str(ROOT / "docker-compose.yml"),
            "config",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for service in ("web:", "worker:", "probes-worker:", "beat:", "redis:", "postgres:"):
        assert f"  {service}" in result.stdout
    # The web port is published on loopback only, unless VIGIL_WEB_BIND says otherwise
    # (compose v1 prints the short form, v2 the long one).
    web = result.stdout.split("  web:")[1].split("\n  worker:")[0]
    assert "127.0.0.1:8000:8000" in web or "host_ip: 127.0.0.1" in web


# Every declared variable is in .env.example: tests/lib/test_appconf.py.
