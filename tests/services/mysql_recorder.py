"""A MySQL server of the tests' own on loopback: it greets, asks what it is told to ask for,
and records every byte a client sends it (what a host someone points a node at would see).

``MysqlRecorder(plugin="mysql_native_password", then=None)``: the greeting names ``plugin``;
after the client's handshake response it sends ``then``: ``("switch", name, data)`` (an
AuthSwitchRequest), ``("full-auth",)`` (caching_sha2_password's "perform full authentication"),
or None; it reads whatever the client answers for a moment, then refuses the login.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field

SALT = b"abcdefgh" + b"ijklmnopqrst"  # 8 + 12 bytes of scramble, as a server sends them
CAPABILITIES = (
    0x00000001  # LONG_PASSWORD
    | 0x00000200  # PROTOCOL_41
    | 0x00008000  # SECURE_CONNECTION
    | 0x00080000  # PLUGIN_AUTH
)


def packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def greeting(plugin: str) -> bytes:
    return (
        b"\x0a"
        + b"10.11.0-recorder\x00"
        + struct.pack("<I", 7)
        + SALT[:8]
        + b"\x00"
        + struct.pack("<H", CAPABILITIES & 0xFFFF)
        + b"\x21"  # utf8_general_ci
        + struct.pack("<H", 2)
        + struct.pack("<H", CAPABILITIES >> 16)
        + bytes([len(SALT) + 1])
        + b"\x00" * 10
        + SALT[8:]
        + b"\x00"
        + plugin.encode()
        + b"\x00"
    )


@dataclass
class MysqlRecorder:
    plugin: str = "mysql_native_password"
    then: tuple | None = None
    received: list[bytes] = field(default_factory=list)  # one item per connection

    def __post_init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                self.received.append(self._converse(conn))

    def _converse(self, conn: socket.socket) -> bytes:
        got = bytearray()
        conn.settimeout(2)
        try:
            conn.sendall(packet(0, greeting(self.plugin)))
            got += self._read(conn)
            seq = 2
            if self.then is not None:
                if self.then[0] == "switch":
                    _, name, data = self.then
                    conn.sendall(packet(seq, b"\xfe" + name.encode() + b"\x00" + data))
                else:  # caching_sha2_password: the fast path failed, send the password
                    conn.sendall(packet(seq, b"\x01\x04"))
                seq += 1
                conn.settimeout(0.5)
                got += self._read(conn)
                seq += 1
            error = b"\xff" + struct.pack("<H", 1045) + b"#28000" + b"Access denied (recorder)"
            conn.sendall(packet(seq, error))
        except OSError:
            pass
        return bytes(got)

    @staticmethod
    def _read(conn: socket.socket) -> bytes:
        """One client packet, or what came before the client stopped or went quiet."""
        data = b""
        try:
            while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:3], "little"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        return data

    @property
    def everything(self) -> bytes:
        return b"".join(self.received)

    def close(self) -> None:
        """Stop listening, once every conversation started has been recorded."""
        deadline = time.monotonic() + 5
        while len(self.received) < self.accepted and time.monotonic() < deadline:
            time.sleep(0.01)
        self._server.close()
