"""``python manage.py probe_keepalive URL [--json] [--cap S]``: measure one server by hand.

The seed timed ``openssl s_client -ign_eof`` after one keep-alive request; this does the same
measurement exactly (the close is stamped when it arrives, not when a person looks).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.probes.keepalive import DEFAULT_CAP_S, Measurement, measure


class Command(BaseCommand):
    help = (
        "Measure how long a server keeps an idle HTTP keep-alive connection open: one GET "
        "with 'Connection: keep-alive', then wait until the server closes or the cap."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", help="http:// or https:// URL")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--cap",
            type=float,
            default=DEFAULT_CAP_S,
            metavar="S",
            help=f"stop waiting after S idle seconds (default {DEFAULT_CAP_S:g})",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=10.0,
            metavar="S",
            help="bound on connecting and on reading the response (default 10)",
        )
        parser.add_argument(
            "--insecure", action="store_true", help="do not verify the TLS certificate"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["cap"] <= 0 or options["timeout"] <= 0:
            raise CommandError("--cap and --timeout must be positive")
        url = options["url"]
        if not options["json"]:
            self.stderr.write(
                f"Probing {url}: waiting up to {options['cap']:g} s for the server to close…"
            )
        measurement = asyncio.run(
            measure(
                url,
                cap_s=options["cap"],
                timeout_s=options["timeout"],
                verify_tls=not options["insecure"],
            )
        )
        if options["json"]:
            self.stdout.write(json.dumps(measurement.as_json(), sort_keys=True))
        else:
            self.stdout.write(describe(measurement))
        if measurement.error is not None:
            raise CommandError(f"probe failed: {measurement.error}")


def describe(m: Measurement) -> str:
    """The measurement as lines a person reads."""
    lines = [m.url]
    if m.peer_address:
        lines.append(f"  peer address        {m.peer_address}")
    if m.status_code is not None:
        lines.append(f"  status              HTTP {m.status_code}")
    phases = [
        ("DNS", m.dns_s),
        ("connect", m.connect_s),
        ("TLS", m.tls_s),
        ("first byte", m.first_byte_s),
        ("total", m.total_s),
    ]
    shown = [f"{name} {value * 1000:.1f} ms" for name, value in phases if value is not None]
    if shown:
        lines.append(f"  times               {' · '.join(shown)}")
    if m.tls_expires is not None:
        lines.append(f"  certificate expires {m.tls_expires:%Y-%m-%d %H:%M} UTC")
    if m.error is not None:
        lines.append(f"  error               {m.error}")
        return "\n".join(lines)
    if m.advertised_timeout_s is None:
        lines.append("  Keep-Alive header   none")
    else:
        matched = "matched" if m.advertised_timeout_matched else "NOT matched"
        if m.advertised_timeout_matched is None:
            matched = "not checked"
        lines.append(f"  Keep-Alive header   timeout={m.advertised_timeout_s:g} ({matched})")
    if m.connection_close_announced:
        lines.append("  Connection: close   announced by the server")
    if m.reuse_confirmed is not None:
        lines.append(f"  reuse confirmed     {'yes' if m.reuse_confirmed else 'no'}")
    if m.closed_by == "cap":
        lines.append(f"  idle timeout        more than {m.cap_s:g} s (still open at the cap)")
    elif m.closed_right_after_response:
        lines.append(
            f"  idle timeout        0 s: closed right after the response "
            f"({m.idle_timeout_s:.3f} s, {m.closed_with})"
        )
    elif m.idle_timeout_s is not None:
        lines.append(
            f"  idle timeout        {m.idle_timeout_s:.3f} s (closed by the server, "
            f"{'reset' if m.closed_with == 'reset' else 'FIN'})"
        )
    return "\n".join(lines)
