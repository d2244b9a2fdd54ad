"""The Galera section of the region page, the cluster page, and adding and editing clusters and
their nodes in the app (Admins, with the live checks of ``apps.lib.liveforms``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import connection
from django.db.models import JSONField
from django.db.models.expressions import RawSQL
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import refuse_unless, requires
from apps.alerts.models import Transition
from apps.lib import agents, liveforms
from apps.lib.pages import subject_page
from apps.regions import editing, panels
from apps.regions.models import Region

from .advice import cluster_advice
from .documented import EVS_SUSPECT_TIMEOUT_S
from .downtime import Downtime, downtime_before_sst
from .forms import ClusterForm, NodeForm
from .models import Cluster, Node, Snapshot
from .quorum import FaultTolerance, describe
from .rates import LAST_COMMITTED
from .recorded import RECORDED
from .transfers import Transfer, transfers
from .verdict import NodeState

DEFAULT_SUSPECT_TIMEOUT_S = EVS_SUSPECT_TIMEOUT_S
CHART_SNAPSHOTS = 720
TRANSITIONS = 20
TRANSFER_SNAPSHOTS = 720  # the polls searched for state transfers (12 h at 60 s)
TRANSFERS = 10
AGENT = "vigil-galera-push"


def headroom_words(cluster: Cluster | Snapshot) -> str | None:
    """ "can lose 2 more nodes one at a time, 1 at once", or None when unknown."""
    if cluster.one_by_one is None or cluster.simultaneous is None:
        return None
    return describe(FaultTolerance(cluster.one_by_one, cluster.simultaneous))


def state_label(state: str, detail: str) -> str:
    """Synced / Donor/Desynced / Joining / down / non-Primary / not a Galera node."""
    if state == NodeState.UNREACHABLE:
        return "down"
    if state == NodeState.NOT_GALERA:
        return "not a Galera node"
    if state == NodeState.NON_PRIMARY:
        return f"non-Primary ({detail})" if detail else "non-Primary"
    if state == NodeState.DISCONNECTED:
        return "cut from the group"
    if state == NodeState.SILENT:
        return "unknown"
    if state == NodeState.PRIMARY:
        return detail or "Primary"
    return "not polled yet"


def region_panel_context(region: Region, limit: int | None) -> dict[str, Any]:
    """The region's clusters worst first (the first ``limit``; all with None), by name among
    equals, and how many there are."""
    clusters, total = panels.worst_first(
        Cluster.objects.filter(region=region), panels.severity(), "name", limit=limit
    )
    for cluster in clusters:
        cluster.headroom = headroom_words(cluster)
    return {"region": region, "clusters": clusters, "total": total}


#: The size chart's columns of a snapshot: (created, cluster_size, data_nodes, one_by_one).
CHART_COLUMNS = ("created", "cluster_size", "data_nodes", "one_by_one")


def size_chart(rows: list[tuple], cluster: Cluster) -> dict[str, Any]:
    """Members, data nodes in the Primary component, and headroom over time, from snapshots'
    ``CHART_COLUMNS`` in time order; gaps stay gaps."""
    created, sizes, data_nodes, one_by_one = (
        map(list, zip(*rows, strict=True)) if rows else ([], [], [], [])
    )
    return {
        "x": [int(t.timestamp()) for t in created],
        "series": [
            {"label": "Cluster size", "unit": "", "values": sizes},
            {"label": "Data nodes", "unit": "", "values": data_nodes},
            {"label": "Can lose one at a time", "unit": "", "values": one_by_one},
            {
                "label": "Expected size",
                "unit": "",
                "dash": True,
                "values": [cluster.expected_size] * len(rows),
            },
        ],
    }


#: The replication charts' columns of a snapshot.
REPLICATION_COLUMNS = (
    "created",
    "flow_control_paused_share",
    "cert_failures_per_minute",
    "recv_queue",
    "send_queue",
    "nodes",
)


def replication_charts(rows: list[tuple]) -> dict[str, dict[str, Any]]:
    """Flow control (share of each interval paused, worst node, in %) with certification
    failures a minute, and the longest queues, from snapshots' ``REPLICATION_COLUMNS`` in time
    order; gaps stay gaps."""
    created, paused, cert, recv, send, nodes = (
        map(list, zip(*rows, strict=True)) if rows else ([], [], [], [], [], [])
    )
    x = [int(t.timestamp()) for t in created]
    latencies = []
    for facts in nodes:
        known = [f.get("repl_latency_s") for f in facts.values()]
        worst = max((v for v in known if v is not None), default=None)
        latencies.append(None if worst is None else round(worst * 1000, 3))
    return {
        "flow": {
            "x": x,
            "series": [
                {
                    "label": "Paused by flow control",
                    "unit": "%",
                    "values": [None if p is None else round(100 * p, 2) for p in paused],
                },
                {"label": "Certification failures a minute", "unit": "", "values": cert},
            ],
        },
        "queues": {
            "x": x,
            "series": [
                {"label": "Longest receive queue", "unit": "", "values": recv},
                {"label": "Longest send queue", "unit": "", "values": send},
            ],
        },
        "latency": {
            "x": x,
            "series": [
                {
                    "label": "Replication latency (average, worst node)",
                    "unit": "ms",
                    "values": latencies,
                }
            ],
        },
    }


def node_rows(nodes: list[Node], latest: Snapshot | None) -> list[dict[str, Any]]:
    facts = latest.nodes if latest else {}
    rows = []
    for node in nodes:
        seen = facts.get(node.label, {})
        rows.append(
            {
                "node": node,
                "state": state_label(node.state, node.detail),
                "kind": node.state or "unpolled",
                "detail": node.detail,
                "facts": seen,
                # Flow control: the share of the last interval, or the lifetime average.
                "paused": {
                    "share": seen.get("flow_control_paused_share"),
                    "interval_s": seen.get("interval_s"),
                    "average": seen.get("flow_control_paused"),
                },
            }
        )
    return rows


def unlisted_members(nodes: list[Node], latest: Snapshot | None) -> list[str]:
    """Members the cluster's view names (each polled node's ``wsrep_incoming_addresses``) that
    are not nodes of Vigil's: a cluster of 4 data nodes with one added shows the other 3."""
    known = {f"{node.host}:{node.port}" for node in nodes} | {node.label for node in nodes}
    found: list[str] = []
    for facts in (latest.nodes if latest else {}).values():
        for address in facts.get("incoming_addresses") or ():
            if address not in known and address not in found and address != "AUTO":
                found.append(address)
    return found


def downtimes(latest: Snapshot | None) -> list[Downtime]:
    """Each Synced node's downtime before SST, from the others' gcache in ``latest`` and the
    cluster's commit rate over its last interval (``downtime``)."""
    facts = (latest.nodes if latest else {}).items()
    synced = {
        name: (seen.get("local_cached_downto"), seen.get("last_committed"))
        for name, seen in facts
        if seen.get("state") == "primary" and seen.get("local_state_comment") == "Synced"
    }
    rates = [seen.get(LAST_COMMITTED.rate_key) for _, seen in facts]
    rate = max((r for r in rates if r is not None), default=None)
    found = (downtime_before_sst(name, synced, rate) for name in sorted(synced))
    return [d for d in found if d is not None]


def live_context(cluster: Cluster) -> dict[str, Any]:
    """What the page's live part (``cluster.html#live``, polled every 30 s) shows: the
    cluster's figures and its nodes with the latest snapshot's facts."""
    nodes = list(cluster.nodes.all())
    latest = cluster.snapshots.order_by("-created", "-pk").first()
    suspect = cluster.suspect_timeout_s
    recovery = None
    if cluster.polled_at is not None and not cluster.primary and nodes:
        recovery = cluster_advice(cluster)[0]
    return {
        "recovery": recovery,
        "downtimes": downtimes(latest) if cluster.primary else [],
        "cluster": cluster,
        "latest": latest,
        "node_list": nodes,
        "nodes": node_rows(nodes, latest),
        "unlisted": unlisted_members(nodes, latest),
        "from_a_sample": any(node.recorded_sample for node in nodes),
        "headroom": headroom_words(cluster),
        "suspect_timeout_s": suspect if suspect is not None else DEFAULT_SUSPECT_TIMEOUT_S,
        "suspect_timeout_known": suspect is not None,
        "recorded": RECORDED,
        "cert_threshold": settings.VIGIL_GALERA_CERT_FAILURES_PER_MINUTE,
        "queue_thresholds": (settings.VIGIL_GALERA_RECV_QUEUE, settings.VIGIL_GALERA_SEND_QUEUE),
    }


#: What the page reads of each node's facts in a snapshot: the transfers' state comment and
#: the latency chart's figure (a snapshot keeps every node's whole status).
NODE_FACTS = ("local_state_comment", "repl_latency_s")


def _node_facts() -> RawSQL:
    """A snapshot's ``nodes`` cut to ``NODE_FACTS`` in the database: {node: {fact: value}}, a
    few bytes to decode where the whole status is kilobytes (720 of them a page)."""
    q = connection.ops.quote_name
    nodes = f"{q(Snapshot._meta.db_table)}.{q('nodes')}"
    if connection.vendor == "postgresql":
        pairs = ", ".join(f"'{f}', e.value -> '{f}'" for f in NODE_FACTS)
        sql = f"SELECT jsonb_object_agg(e.key, jsonb_build_object({pairs})) FROM jsonb_each({nodes}) e"
    else:
        pairs = ", ".join(f"'{f}', json_extract(e.value, '$.{f}')" for f in NODE_FACTS)
        sql = f"SELECT json_group_object(e.key, json_object({pairs})) FROM json_each({nodes}) e"
    return RawSQL(f"({sql})", (), output_field=JSONField())


def recent_snapshots(cluster: Cluster, count: int) -> list[tuple]:
    """The last ``count`` snapshots oldest first, as tuples: ``CHART_COLUMNS``, then
    ``REPLICATION_COLUMNS`` with ``nodes`` cut to ``NODE_FACTS`` (one query for the charts and
    the transfers; a model instance and the whole status per snapshot were most of the page)."""
    columns = dict.fromkeys([*CHART_COLUMNS, *REPLICATION_COLUMNS[:-1]])
    rows = (
        cluster.snapshots.order_by("-created", "-pk")
        .annotate(node_facts=_node_facts())
        .values_list(*columns, "node_facts")[:count]
    )
    return [(*row[:-1], row[-1] or {}) for row in reversed(rows)]


def recent_transfers(rows: list[tuple]) -> list[Transfer]:
    """State transfers in ``recent_snapshots`` rows (``transfers``), the most recent first."""
    history = [
        (row[0], {name: seen.get("local_state_comment") for name, seen in row[-1].items()})
        for row in rows[-TRANSFER_SNAPSHOTS:]
    ]
    return transfers(history)[:TRANSFERS]


def history_context(cluster: Cluster, latest: Snapshot | None) -> dict[str, Any]:
    """The charts and the state transfers, from the last snapshots: shared among requests for
    ``VIGIL_PAGE_CACHE_SECONDS`` while the newest snapshot is ``latest`` (a poll's or a push's
    new snapshot is a new key: never an answer older than the page's live part)."""

    def work() -> dict[str, Any]:
        rows = recent_snapshots(cluster, max(CHART_SNAPSHOTS, TRANSFER_SNAPSHOTS))
        charted = rows[-CHART_SNAPSHOTS:]
        width = len(CHART_COLUMNS)
        replication = replication_charts([(row[0], *row[width:]) for row in charted])
        return {
            "size_chart": size_chart([row[:width] for row in charted], cluster),
            **{f"{key}_chart": chart for key, chart in replication.items()},
            "transfers": recent_transfers(rows),
        }

    seconds = settings.VIGIL_PAGE_CACHE_SECONDS
    if seconds <= 0:
        return work()
    newest = f"{latest.pk}:{latest.created.timestamp()}" if latest else "none"
    key = f"vigil:galera:history:{cluster.pk}:{cluster.expected_size}:{newest}"
    found = cache.get(key)
    if found is None:
        found = work()
        cache.set(key, found, seconds)
    return found


def cluster_context(cluster: Cluster) -> dict[str, Any]:
    context = live_context(cluster)
    nodes = context["node_list"]
    return (
        context
        | history_context(cluster, context["latest"])
        | {
            "samples": sorted({n.recorded_sample for n in nodes if n.recorded_sample}),
            "transitions": Transition.objects.filter(
                content_type=ContentType.objects.get_for_model(Cluster), object_id=cluster.pk
            ).order_by("-created")[:TRANSITIONS],
            "push_nodes": [node for node in nodes if node.mode == Node.Mode.PUSH],
            "agent_files": agents.files(AGENT),
            "vigil_url": settings.VIGIL_BASE_URL,
            "push_stale_minutes": settings.VIGIL_GALERA_PUSH_STALE_MINUTES,
        }
    )


@require_safe
def cluster_detail(request: HttpRequest, pk: int) -> HttpResponse:
    cluster = get_object_or_404(Cluster.objects.select_related("region", "region__account"), pk=pk)
    if request.htmx:  # the 30-second poll: no chart, no history
        return render(request, "galera/cluster.html#live", live_context(cluster))
    context = cluster_context(cluster)
    charts = {
        "size": context["size_chart"],
        "flow": context["flow_chart"],
        "queues": context["queues_chart"],
        "latency": context["latency_chart"],
    }
    return subject_page(request, "galera/cluster.html", context, charts, f"galera-{pk}")


@requires("galera.change_node")
@require_POST
def node_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Replace a pushing node's token and show the new one, once, with its settings file."""
    node = get_object_or_404(Node.objects.select_related("cluster"), pk=pk)
    cluster = get_object_or_404(
        Cluster.objects.select_related("region", "region__account"), pk=node.cluster_id
    )
    context = cluster_context(cluster)
    context["new_token"] = node.issue_token()
    context["new_token_node"] = node
    return render(request, "galera/cluster.html", context)


@require_safe
def node_agent(request: HttpRequest, pk: int, filename: str) -> HttpResponse:
    """The push agent (this node's id and Vigil's URL filled in), its units, its cron line."""
    node = get_object_or_404(Node, pk=pk)
    return agents.download(AGENT, filename, {"VIGIL_NODE": str(node.pk)})


def cluster_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    """A new cluster (``pk`` None), or cluster ``pk``: a new one goes on to its first node."""
    cluster, form = editing.subject_form(request, ClusterForm, pk)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        if cluster is None:
            return redirect("galera:node_add", pk=saved.pk)  # a cluster needs a node to poll
        return redirect("galera:cluster_detail", pk=saved.pk)
    nodes = list(cluster.nodes.all()) if cluster else []
    context = {"form": form, "cluster": cluster, "nodes": nodes}
    return render(request, "galera/edit.html", context, status=400 if form.errors else 200)


def node_edit(request: HttpRequest, pk: int | None = None, node: int | None = None) -> HttpResponse:
    """A new node of cluster ``pk``, or node ``node`` of it."""
    refuse_unless(request, "galera.change_node" if node else "galera.add_node")
    cluster = get_object_or_404(Cluster, pk=pk)
    instance = get_object_or_404(Node, pk=node, cluster=cluster) if node else Node(cluster=cluster)
    form = NodeForm(request.POST or None, instance=instance)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("galera:cluster_edit", pk=cluster.pk)
    context = {"form": form, "cluster": cluster, "node": instance if node else None}
    return render(request, "galera/edit_node.html", context, status=400 if form.errors else 200)
