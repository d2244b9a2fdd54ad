"""Run a real nginx (Debian's /usr/sbin/nginx) on loopback ports for tests and the benchmark.

Everything nginx writes (pid, logs, temp paths) stays in a private directory; nginx runs in
the foreground (``daemon off;``) as our child process, so it is stopped by its PID.
"""

from __future__ import annotations

import datetime
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.services import free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
# keepalive_timeout values under test; "5s 3" also sends the header "Keep-Alive: timeout=3".
KEEPALIVE_TIMEOUTS = ("0", "1s", "3s", "7s", "5s 3")


@dataclass(frozen=True)
class Site:
    """One server block: ``keepalive`` is the text after ``keepalive_timeout``."""

    keepalive: str
    tls: bool = False
    port: int = 0


def write_self_signed_certificate(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A throwaway certificate for ``name`` and 127.0.0.1, valid for 30 days."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(name), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class Nginx:
    """A foreground nginx child process serving ``sites`` on 127.0.0.1."""

    def __init__(
        self,
        directory: Path,
        sites: list[Site],
        *,
        workers: int = 1,
        worker_connections: int = 1024,
        backlog: int = 511,
    ) -> None:
        self.directory = directory
        self.sites = [Site(site.keepalive, site.tls, site.port or free_port()) for site in sites]
        self.workers = workers
        self.worker_connections = worker_connections
        self.backlog = backlog
        self.process: subprocess.Popen[bytes] | None = None
        self.cert_path: Path | None = None

    def url(self, site: Site) -> str:
        return f"{'https' if site.tls else 'http'}://127.0.0.1:{site.port}/"

    def site(self, keepalive: str, tls: bool = False) -> Site:
        return next(s for s in self.sites if s.keepalive == keepalive and s.tls == tls)

    def config(self) -> str:
        d = self.directory
        blocks = []
        for site in self.sites:
            tls = (
                f"ssl_certificate {self.cert_path}; ssl_certificate_key {d / 'key.pem'};"
                if site.tls
                else ""
            )
            blocks.append(
                f"""
    server {{
        listen 127.0.0.1:{site.port} backlog={self.backlog}{" ssl" if site.tls else ""};
        server_name localhost;
        {tls}
        keepalive_timeout {site.keepalive};
        keepalive_requests 1000;
        location / {{ return 200 "keep-alive {site.keepalive}\\n"; }}
    }}"""
            )
        return f"""
daemon off;
master_process on;
user root;
worker_processes {self.workers};
worker_rlimit_nofile {self.worker_connections * 2 + 64};
pid {d / "nginx.pid"};
error_log {d / "error.log"} warn;
events {{ worker_connections {self.worker_connections}; multi_accept on; }}
http {{
    access_log off;
    client_body_temp_path {d / "client_body"};
    proxy_temp_path {d / "proxy"};
    fastcgi_temp_path {d / "fastcgi"};
    uwsgi_temp_path {d / "uwsgi"};
    scgi_temp_path {d / "scgi"};
    default_type text/plain;
    {"".join(blocks)}
}}
"""

    def start(self, timeout_s: float = 10) -> Nginx:
        self.directory.mkdir(parents=True, exist_ok=True)
        if any(site.tls for site in self.sites):
            self.cert_path, _ = write_self_signed_certificate(self.directory)
        conf = self.directory / "nginx.conf"
        conf.write_text(self.config())
        self.process = subprocess.Popen(
            [
                NGINX,
                "-c",
                str(conf),
                "-p",
                str(self.directory),
                "-e",
                str(self.directory / "error.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout_s
        pending = {site.port for site in self.sites}
        while pending:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                log = (self.directory / "error.log").read_text(errors="replace")
                raise RuntimeError(f"nginx exited: {error} {log}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("nginx did not start listening in time")
            for port in list(pending):
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        pending.discard(port)
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # SIGTERM to the master we started: fast shutdown
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def __enter__(self) -> Nginx:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def raise_open_files_limit(wanted: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``wanted``; return the new soft limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if os.geteuid() == 0 and hard != resource.RLIM_INFINITY and wanted > hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
        except (ValueError, OSError):
            pass
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return max(target, soft)
