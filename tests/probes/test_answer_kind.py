"""A probe's error names the kind of answer that was not HTTP, never its bytes: viewers read it,
and the greeting of whatever answered would map internal services for them."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from apps.probes import tasks
from apps.probes.models import Target
from apps.probes.parse_http1 import answer_kind

BANNER = b"SSH-2.0-OpenSSH_9.2p1 internal-db-7\r\n"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("SSH-2.0-OpenSSH_9.2p1 internal-db-7", "an SSH server's greeting"),
        ("\x16\x03\x01\x00\xa5\x01\x00", "a TLS record (the server speaks HTTPS?)"),
        ("\x15\x03\x03\x00\x02\x02\x46", "a TLS record (the server speaks HTTPS?)"),
        ("220 mail.internal ESMTP Postfix", "an SMTP or FTP greeting"),
        ("-ERR unknown command 'GET'", "a POP3 or Redis reply"),
        ("* OK [CAPABILITY IMAP4rev1] dovecot ready.", "an IMAP greeting"),
        ("HTTP/1.1 2OO OK", "a malformed HTTP status line"),
        ("<html><body>internal wiki</body></html>", "markup (HTML or XML) without an HTTP head"),
        ('{"cluster_name": "prod-es"}', "JSON without an HTTP head"),
        ("\x00\x01\x02\x03\xfe\xff\x10\x11", "binary data"),
        ("", "an empty line"),
        ("hello from billing-db", "a line of text"),
    ],
)
def test_it_names_the_kind_of_answer(line, kind):
    assert answer_kind(line) == kind


@pytest.fixture
def ssh_like_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that greets like sshd, whatever it is sent."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(BANNER)
                try:
                    conn.settimeout(2)
                    conn.recv(4096)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


@pytest.mark.django_db
def test_a_viewer_reads_the_kind_of_answer_not_the_services_greeting(
    site, ssh_like_server, client, viewer
):
    probe = Target.objects.create(
        region=site, url=f"http://127.0.0.1:{ssh_like_server}/", cap_s=30.0
    )
    tasks.run_probes([probe.pk])
    client.force_login(viewer)

    page = client.get(f"/probes/targets/{probe.pk}/").content.decode()
    target = client.get(f"/api/probes/targets/{probe.pk}/").content.decode()
    results = client.get(f"/api/probes/results/?target={probe.pk}").content.decode()

    for answer in (page, target, results):
        assert "internal-db-7" not in answer and "OpenSSH" not in answer
    assert "not an HTTP response: an SSH server&#x27;s greeting" in page
    assert "not an HTTP response: an SSH server's greeting" in results
