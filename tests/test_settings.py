"""Settings fail at start, naming the variable, rather than running with a surprise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.services import vigil_env

pytestmark = pytest.mark.slow


def start(settings_module: str = "config.settings.base", **env: str) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=vigil_env(settings_module, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_starts_on_the_local_defaults():
    result = start()
    assert result.returncode == 0, result.stderr


def test_it_names_a_malformed_variable():
    result = start(VIGIL_DEMO_AWS_PORT="eighty")
    assert result.returncode != 0
    assert "Invalid value for VIGIL_DEMO_AWS_PORT" in result.stderr


def test_it_names_an_unknown_vigil_variable():
    result = start(VIGIL_DEMO_MODE="true")
    assert "Unknown setting VIGIL_DEMO_MODE" in result.stderr


def test_it_names_a_malformed_database_url():
    result = start(DATABASE_URL="postgress//nope")
    assert result.returncode != 0 and "DATABASE_URL" in result.stderr


def test_it_reads_a_secret_from_a_file(tmp_path):
    secret = tmp_path / "secret_key"
    secret.write_text("from-a-secrets-file")
    result = start(SECRET_KEY_FILE=str(secret))
    assert result.stdout.strip() == "from-a-secrets-file"


def test_it_requires_a_secret_key_in_production():
    result = start("config.settings.production", ALLOWED_HOSTS="vigil.example.com")
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr
    result = start("config.settings.production", ALLOWED_HOSTS="vigil.example.com", SECRET_KEY="")
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_it_names_a_malformed_allow_list():
    result = start(VIGIL_METRICS_ALLOW="10.0.0.0/8,not-an-address")
    assert result.returncode != 0
    assert "Invalid value for VIGIL_METRICS_ALLOW" in result.stderr


def test_it_takes_addresses_and_networks():
    assert start(VIGIL_METRICS_ALLOW="10.0.0.0/8, 192.0.2.7,2001:db8::/32").returncode == 0


PRODUCTION = {"SECRET_KEY": "x" * 40, "ALLOWED_HOSTS": "vigil.example.com"}
DEMO = (
    "import django; django.setup(); from django.conf import settings; "
    "from apps.demo.mode import demo_enabled; from apps.lib import outbound; "
    "print(settings.VIGIL_DEMO, demo_enabled(), outbound.Policy.from_settings().allow_loopback)"
)


def demo_mode(settings_module: str, **env: str) -> str:
    """What a process of these settings says of demo mode, with no AWS credentials anywhere."""
    env = {k: v for k, v in vigil_env(settings_module, **env).items() if not k.startswith("AWS_")}
    env |= {"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"}
    result = subprocess.run(
        [sys.executable, "-c", DEMO], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_keeps_demo_mode_and_loopback_probing_off_without_credentials():
    assert demo_mode("config.settings.production", **PRODUCTION) == "false False False"
    assert demo_mode("config.settings.production", **PRODUCTION, VIGIL_DEMO="true").startswith(
        "true True"
    )


def test_the_local_defaults_keep_demo_mode_automatic():
    assert demo_mode("config.settings.base") == "auto True True"
