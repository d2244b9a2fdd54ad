"""What a pushing node sent (agents/vigil-galera-push): the same parser as a poll's rows.

The agent sends the text of ``SHOW GLOBAL STATUS LIKE 'wsrep_%'`` (``mariadb -B -N``, or any
form ``parse_wsrep.parse_status`` reads) with ``wsrep_provider_options`` as one more row, or apart
(JSON ``provider_options``): every ``wsrep_*`` variable a poll reads (the flow-control counter,
the queues now, the cluster weight, the delayed and eviction lists among them), checked by the
same parser. Options that cannot be read are ignored, as in a poll (the node's weight is then
worked out from ``wsrep_cluster_weight``, or counts 1).

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from apps.galera.parse_wsrep import (
    ParseError,
    ProviderOptions,
    WsrepStatus,
    parse_provider_options,
    parse_status,
)
from apps.galera.verdict import NodeResult

OPTIONS_VARIABLE = "wsrep_provider_options"


def read_report(
    status_text: str, options_text: str = ""
) -> tuple[WsrepStatus, ProviderOptions | None]:
    """The node's status and provider options; ``ParseError`` naming the line."""
    status = parse_status(status_text)
    options_text = options_text or status.variables.get(OPTIONS_VARIABLE, "")
    options = None
    if options_text.strip():
        try:
            options = parse_provider_options(options_text)
        except ParseError:
            options = None
    return status, options


def pushed_result(
    label: str, status_text: str, options_text: str = "", read_at: float | None = None
) -> NodeResult:
    """A stored report as a poll's result (an unreadable one is that node's error);
    ``read_at``: when it was pushed (Unix time)."""
    try:
        status, options = read_report(status_text, options_text)
    except ParseError as error:
        return NodeResult(label, error=f"unreadable wsrep status: {error}", read_at=read_at)
    return NodeResult(label, status=status, options=options, read_at=read_at)
