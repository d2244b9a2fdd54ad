"""Adapter: poll Galera nodes over the MySQL protocol (PyMySQL).

Each node answers ``SHOW GLOBAL STATUS LIKE 'wsrep_%'`` and the ``wsrep_provider_options``
variable; both need only the USAGE privilege::

    CREATE USER 'vigil_monitor'@'%' IDENTIFIED BY '...';
    GRANT USAGE ON *.* TO 'vigil_monitor'@'%';

Connect and read timeouts are short and nodes are polled concurrently, so a dead or
black-holed node costs one timeout, not one per node. Errors never escape: they come back
as a ``NodeResult`` with the error text (the server's own message for wrong credentials).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pymysql

from apps.galera.view import NodeResult
from apps.galera.wsrep import ParseError, WsrepStatus, parse_provider_options

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
) -> NodeResult:
    """The wsrep status of one node, or the error that prevented reading it."""
    label = name or f"{host}:{port}"
    try:
        connection = pymysql.connect(
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
        )
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
    try:
        status = WsrepStatus.from_rows(rows)
    except ParseError as error:
        return NodeResult(label, error=f"unreadable wsrep status: {error}")
    options = None
    if options_rows and options_rows[0][1]:
        try:
            options = parse_provider_options(str(options_rows[0][1]))
        except ParseError:
            options = None  # weights then default to 1; the status itself is still good
    return NodeResult(label, status=status, options=options)


def poll_nodes(
    nodes: Iterable[NodeAddress | tuple[str, int]],
    user: str = "",
    password: str = "",
    *,
    ssl: Mapping[str, Any] | None = None,
    connect_timeout: float = 2.0,
    read_timeout: float = 2.0,
) -> list[NodeResult]:
    """Poll every node at once; results come back in the order of ``nodes``."""
    addresses = [n if isinstance(n, NodeAddress) else NodeAddress(*n) for n in nodes]
    if not addresses:
        return []
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
            )
            for address in addresses
        ]
        return [future.result() for future in futures]
