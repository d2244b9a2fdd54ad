"""Adapter: poll Galera nodes over the MySQL protocol (PyMySQL).

Each node answers ``SHOW GLOBAL STATUS LIKE 'wsrep_%'`` and ``wsrep_provider_options``, which
need only the USAGE privilege. Timeouts are short and nodes are polled concurrently, so a dead
node costs one timeout; errors never escape, they come back as a ``NodeResult`` with the error
text. The address passes the outbound guard (``apps.lib.outbound``: PyMySQL gets the connected
socket, TLS still checks the name), and the password never reaches a server that asks for it in
clear or encrypted with a key it chose, except over verified TLS (``GuardedConnection``).
The monitoring user and what is refused: docs/galera.md.
"""

from __future__ import annotations

import logging
import ssl as ssl_module
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pymysql
from pymysql.constants import CLIENT, CR

from apps.galera.parse_wsrep import ParseError, WsrepStatus, parse_provider_options
from apps.galera.verdict import NodeResult
from apps.lib import outbound

log = logging.getLogger(__name__)

STATUS_QUERY = "SHOW GLOBAL STATUS LIKE 'wsrep\\_%'"
OPTIONS_QUERY = "SHOW GLOBAL VARIABLES LIKE 'wsrep\\_provider\\_options'"


@dataclass(frozen=True)
class NodeAddress:
    """Where to poll one node; ``name`` defaults to ``host:port``.

    ``user``, ``password`` and ``ssl`` override the ones given to ``poll_nodes``.
    """

    host: str
    port: int = 3306
    name: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl: Mapping[str, Any] | None = None

    @property
    def label(self) -> str:
        return self.name or f"{self.host}:{self.port}"


#: Authentication methods that hand the password itself to the server: never.
CLEARTEXT_PLUGINS = {
    b"mysql_clear_password": "sends the password in clear",
    b"dialog": "sends the password in clear",
    b"mysql_old_password": "uses the broken pre-4.1 password hash",
}
#: Methods whose full exchange gives the server the password: only over verified TLS.
FULL_PASSWORD_PLUGINS = (b"sha256_password", b"caching_sha2_password")
_PERFORM_FULL_AUTHENTICATION = 4  # caching_sha2_password: "the fast path failed, send it"


class PasswordRefused(pymysql.err.OperationalError):
    """The server asked for the password in a way Vigil does not give it."""


class GuardedConnection(pymysql.connections.Connection):
    """PyMySQL's connection, which never gives the password to a server it has not verified.

    Refused always: a switch to ``mysql_clear_password``, ``dialog`` or ``mysql_old_password``.
    Without TLS whose certificate and host name are verified: ``sha256_password`` (a greeting
    that asks for it is answered with ``mysql_native_password``'s scramble instead, so the
    server may switch, and is then refused) and a full ``caching_sha2_password`` exchange (its
    scrambled fast path, like ``mysql_native_password``'s, never reveals the password).
    """

    _verified_tls = False
    _authenticating = False

    def _request_authentication(self) -> None:
        ctx = getattr(self, "ctx", None)
        self._verified_tls = bool(
            self.ssl
            and self.server_capabilities & CLIENT.SSL
            and ctx is not None
            and ctx.verify_mode == ssl_module.CERT_REQUIRED
            and ctx.check_hostname
        )
        if self._auth_plugin_name == "sha256_password" and not self._verified_tls:
            self._auth_plugin_name = "mysql_native_password"
        self._authenticating = True
        try:
            super()._request_authentication()
        finally:
            self._authenticating = False

    def _process_auth(self, plugin_name: bytes, auth_packet: Any, handler: Any = None) -> Any:
        why = CLEARTEXT_PLUGINS.get(plugin_name)
        if why is None and plugin_name == b"sha256_password" and not self._verified_tls:
            why = "sends the password to the server, which is only allowed over verified TLS"
        if why:
            self._refuse(plugin_name.decode(errors="replace"), why)
        return super()._process_auth(plugin_name, auth_packet, handler)

    def _read_packet(self, packet_type: Any = pymysql.protocol.MysqlPacket) -> Any:
        packet = super()._read_packet(packet_type)
        if (
            self._authenticating
            and not self._verified_tls
            and packet.is_extra_auth_data()
            and packet._data[1:2] == bytes([_PERFORM_FULL_AUTHENTICATION])
        ):
            self._refuse(
                "caching_sha2_password",
                "asked for the full exchange, which sends the password: only over verified TLS",
            )
        return packet

    def _refuse(self, plugin: str, why: str) -> None:
        raise PasswordRefused(
            CR.CR_AUTH_PLUGIN_CANNOT_LOAD,
            f"refused the server's {plugin} authentication: it {why}",
        )


def _error_text(error: BaseException) -> str:
    if isinstance(error, pymysql.err.MySQLError) and len(error.args) >= 2:
        code, message = error.args[0], error.args[1]
        return f"({code}) {message}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def poll_node(
    host: str,
    port: int,
    user: str,
    password: str,
    *,
    ssl: Mapping[str, Any] | None = None,
    connect_timeout: float = 2.0,
    read_timeout: float = 2.0,
    name: str | None = None,
    policy: outbound.Policy | None = None,
) -> NodeResult:
    """The wsrep status of one node, or the error that prevented reading it.

    ``policy``: the outbound guard's (default: from the settings).
    """
    label = name or f"{host}:{port}"
    try:
        connection = GuardedConnection(
            host=host,
            port=port,
            user=user,
            password=password,
            ssl=dict(ssl) if ssl else None,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            write_timeout=read_timeout,
            charset="utf8mb4",
            autocommit=True,
            defer_connect=True,
        )
        try:
            sock = outbound.connect(host, port, connect_timeout, policy)
        except OSError as error:  # worded as PyMySQL words it when it connects itself
            raise pymysql.err.OperationalError(
                CR.CR_CONN_HOST_ERROR, f"Can't connect to MySQL server on {host!r} ({error})"
            ) from error
        connection.host_info = f"socket {host}:{port}"
        connection.connect(sock=sock)
    except outbound.OutboundRefused as error:
        return NodeResult(label, error=str(error))
    except Exception as error:  # refused, timed out, access denied, TLS...
        return NodeResult(label, error=_error_text(error))
    try:
        with connection.cursor() as cursor:
            cursor.execute(STATUS_QUERY)
            rows = [(str(n), "" if v is None else str(v)) for n, v in cursor.fetchall()]
            cursor.execute(OPTIONS_QUERY)
            options_rows = cursor.fetchall()
    except Exception as error:
        return NodeResult(label, error=_error_text(error))
    finally:
        connection.close()
    return result_from_rows(label, rows, options_rows)


def result_from_rows(
    label: str, rows: list[tuple[str, str]], options_rows: Sequence[Sequence[Any]]
) -> NodeResult:
    """What a node's answer means: its status, or why it cannot be believed (a figure no
    cluster can have is that node's error, never a figure)."""
    try:
        status = WsrepStatus.from_rows(rows)
    except ParseError as error:
        return NodeResult(label, error=f"unreadable wsrep status: {error}")
    options = None
    if options_rows and options_rows[0][1]:
        try:
            options = parse_provider_options(str(options_rows[0][1]))
        except ParseError as error:  # weights then default to 1; the status is still good
            log.warning("%s: unreadable wsrep_provider_options: %s", label, error)
    return NodeResult(label, status=status, options=options)


def poll_nodes(
    nodes: Iterable[NodeAddress | tuple[str, int]],
    user: str = "",
    password: str = "",
    *,
    ssl: Mapping[str, Any] | None = None,
    connect_timeout: float = 2.0,
    read_timeout: float = 2.0,
    policy: outbound.Policy | None = None,
) -> list[NodeResult]:
    """Poll every node at once; results come back in the order of ``nodes``."""
    addresses = [n if isinstance(n, NodeAddress) else NodeAddress(*n) for n in nodes]
    if not addresses:
        return []
    policy = policy or outbound.Policy.from_settings()
    with ThreadPoolExecutor(max_workers=min(len(addresses), 16)) as pool:
        futures = [
            pool.submit(
                poll_node,
                address.host,
                address.port,
                address.user if address.user is not None else user,
                address.password if address.password is not None else password,
                ssl=address.ssl if address.ssl is not None else ssl,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                name=address.label,
                policy=policy,
            )
            for address in addresses
        ]
        return [future.result() for future in futures]
