"""``manage.py probe_keepalive`` against the real nginx on loopback."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from tests.helpers import ROOT
from tests.services import free_port
from tests.services.nginx import Nginx


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("probe_keepalive", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_the_idle_timeout_nginx_was_configured_with_as_json(nginx: Nginx):
    out, _ = run(nginx.url(nginx.site("3s")), "--json", "--cap", "30")

    data = json.loads(out)
    assert data["idle_timeout_s"] == pytest.approx(3.0, abs=0.5)
    assert data["closed_by"] == "server"
    assert data["advertised_timeout_s"] is None
    assert data["status_code"] == 200
    assert data["error"] is None


def test_it_prints_the_advertised_keep_alive_header_over_https(nginx: Nginx):
    out, _ = run(nginx.url(nginx.site("5s 3", tls=True)), "--json", "--insecure")

    data = json.loads(out)
    assert data["advertised_timeout_s"] == 3.0
    assert data["advertised_timeout_matched"] is False
    assert data["idle_timeout_s"] == pytest.approx(5.0, abs=0.5)
    assert data["tls_s"] is not None
    assert data["tls_expires"] is not None


def test_it_prints_null_and_cap_when_the_server_outlasts_the_cap(nginx: Nginx):
    out, _ = run(nginx.url(nginx.site("7s")), "--json", "--cap", "1")

    data = json.loads(out)
    assert data["idle_timeout_s"] is None
    assert data["closed_by"] == "cap"
    assert data["cap_s"] == 1.0


def test_it_prints_a_readable_measurement_for_people(nginx: Nginx):
    out, err = run(nginx.url(nginx.site("1s")))

    assert "waiting up to 1200 s" in err
    assert "HTTP 200" in out
    assert "peer address        127.0.0.1" in out
    idle = re.search(r"idle timeout +([0-9.]+) s", out)
    assert idle and float(idle.group(1)) == pytest.approx(1.0, abs=0.5)
    assert "closed by the server, FIN" in out
    assert "Keep-Alive header   none" in out


def test_it_says_nginx_with_keepalive_timeout_0_closes_right_after_the_response(nginx: Nginx):
    out, _ = run(nginx.url(nginx.site("0")))

    assert "0 s: closed right after the response" in out
    assert "Connection: close   announced by the server" in out


def test_it_fails_with_the_reason_when_nothing_listens():
    with pytest.raises(CommandError, match="unreachable"):
        run(f"http://127.0.0.1:{free_port()}/", "--json")


def test_it_fails_on_an_untrusted_certificate_unless_told_to_skip_the_check(nginx: Nginx):
    with pytest.raises(CommandError, match="TLS failure"):
        run(nginx.url(nginx.site("1s", tls=True)), "--json")


def test_it_runs_as_a_command_line_program_and_exits_0(nginx: Nginx):
    result = subprocess.run(
        [sys.executable, "manage.py", "probe_keepalive", nginx.url(nginx.site("1s")), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["idle_timeout_s"] == pytest.approx(1.0, abs=0.5)
    assert data["closed_by"] == "server"
