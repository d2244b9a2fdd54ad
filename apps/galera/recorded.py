"""The adapter for recorded nodes (demo mode): a node's ``SHOW STATUS`` read from a published
sample in ``demo_samples/`` (see its README) instead of a connection."""

from __future__ import annotations

from pathlib import Path

from .models import Node
from .parse_wsrep import ParseError, parse_status
from .verdict import NodeResult

SAMPLES = Path(__file__).resolve().parent / "demo_samples"
RECORDED = "recorded sample"


def sample_result(node: Node) -> NodeResult:
    """The node's recorded sample as if it had just been polled."""
    try:
        text = (SAMPLES / Path(node.recorded_sample).name).read_text()
        return NodeResult(node.label, status=parse_status(text))
    except (OSError, ParseError) as error:
        return NodeResult(node.label, error=f"{RECORDED} {node.recorded_sample}: {error}")
