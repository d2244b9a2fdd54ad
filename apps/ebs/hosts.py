"""Where EBS meets the rest, the database part (``Concern.notes`` and ``Concern.aside_context``):
a Galera cluster's nodes and a RAID host (and its failure domains, the storage servers) placed
on their EC2 instances, with those instances' volumes and burst balances.

The dependency points from here to apps/galera and apps/raid, never back: they ask the concern
registry (``apps.regions.concerns``), which asks this module.
"""

from __future__ import annotations

from typing import Any

from apps.galera.models import Cluster
from apps.raid.models import Array, Host, Member

from .models import HostLink, Instance, Volume
from .placement import (
    InstanceView,
    Placement,
    by_address,
    by_name,
    leg,
    slows,
    storage_notes,
)
from .placement import VolumeView as View


def _instance_view(i: Instance) -> InstanceView:
    return InstanceView(
        i.pk, i.instance_id, i.name, i.instance_type, tuple(i.private_ips), i.figures
    )


def _instances(region_id: int) -> list[InstanceView]:
    return [
        _instance_view(i)
        for i in Instance.objects.filter(region_id=region_id, deleted__isnull=True)
    ]


def _named(instance_ids: set[str]) -> dict[str, InstanceView]:
    """Instances named by a link, wherever they are (a site's host may name one)."""
    found = Instance.objects.filter(instance_id__in=instance_ids, deleted__isnull=True)
    return {i.instance_id: _instance_view(i) for i in found}


def _with_volumes(placements: dict[str, tuple[InstanceView, str]]) -> dict[str, Placement]:
    """The placements with their instances' live volumes, in one query."""
    pks = {instance.pk for instance, _ in placements.values()}
    volumes: dict[int, list[View]] = {pk: [] for pk in pks}
    rows = Volume.objects.filter(instance_id__in=pks, deleted__isnull=True).select_related(
        "instance"
    )
    for v in rows.order_by("device", "volume_id"):
        volumes[v.instance_id].append(
            View(
                v.pk,
                v.volume_id,
                v.label,
                v.volume_type,
                v.size_gib,
                v.device,
                v.status,
                v.is_root,
                v.tags,
                v.figures,
            )
        )
    return {
        key: Placement(instance, how, tuple(volumes[instance.pk]))
        for key, (instance, how) in placements.items()
    }


def galera_placements(cluster: Cluster) -> dict[str, Placement]:
    """``{node label: Placement}`` for the nodes Vigil can place on an instance."""
    links = {
        link.galera_node_id: link.instance_id
        for link in HostLink.objects.filter(galera_node__cluster=cluster)
    }
    named = _named(set(links.values()))
    local = _instances(cluster.region_id)
    found: dict[str, tuple[InstanceView, str]] = {}
    for node in cluster.nodes.all():
        if node.pk in links and links[node.pk] in named:
            found[node.label] = (named[links[node.pk]], "named in Vigil")
        elif (instance := by_address(node.host, local)) is not None:
            found[node.label] = (instance, f"private address {node.host}")
    return _with_volumes(found)


def raid_placements(host: Host) -> tuple[Placement | None, dict[str, Placement]]:
    """The host's own instance, and ``{failure domain: Placement}`` for its storage servers."""
    links = {link.domain: link.instance_id for link in HostLink.objects.filter(raid_host=host)}
    named = _named(set(links.values()))
    local = _instances(host.region_id)
    found: dict[str, tuple[InstanceView, str]] = {}
    if links.get("") in named:
        found[""] = (named[links[""]], "named in Vigil")
    elif (instance := by_address(host.ssh_address, local)) is not None:
        found[""] = (instance, f"private address {host.ssh_address}")
    elif (instance := by_name(host.name, local)) is not None:
        found[""] = (instance, f"Name tag {host.name}")
    for domain in sorted(set((host.domain_rules or {}).values())):
        if links.get(domain) in named:
            found[domain] = (named[links[domain]], "named in Vigil")
        elif (instance := by_name(domain, local)) is not None:
            found[domain] = (instance, f"Name tag {domain}")
    placed = _with_volumes(found)
    return placed.pop("", None), placed


def carried(region_id: int) -> dict[int, list[str]]:
    """``{instance pk: ["Galera node db-1 of prod", ...]}``: what Vigil watches on the
    region's instances, for the reasons (and so the alerts) of their volumes."""
    found: dict[int, list[str]] = {}
    local = {i.pk for i in Instance.objects.filter(region_id=region_id, deleted__isnull=True)}
    linked = HostLink.objects.filter(
        instance_id__in=Instance.objects.filter(pk__in=local).values("instance_id")
    )
    clusters = Cluster.objects.filter(
        pk__in=linked.values("galera_node__cluster")
    ) | Cluster.objects.filter(region_id=region_id)
    for cluster in clusters.distinct():
        for label, placement in galera_placements(cluster).items():
            if placement.instance.pk in local:
                found.setdefault(placement.instance.pk, []).append(
                    f"Galera node {label} of {cluster.name}"
                )
    hosts = Host.objects.filter(pk__in=linked.values("raid_host")) | Host.objects.filter(
        region_id=region_id
    )
    for host in hosts.distinct():
        own, domains = raid_placements(host)
        if own is not None and own.instance.pk in local:
            found.setdefault(own.instance.pk, []).append(f"RAID host {host.name}")
        for domain, placement in domains.items():
            if placement.instance.pk in local:
                text = f"{host.domain_noun} {domain} of RAID host {host.name}"
                found.setdefault(placement.instance.pk, []).append(text)
    return found


def notes(obj: Any) -> dict[str, list[str]]:
    """For a Galera cluster: ``{node label: [its volumes or instance out of credits]}``."""
    if not isinstance(obj, Cluster):
        return {}
    found = {}
    for label, placement in galera_placements(obj).items():
        if texts := storage_notes(placement):
            found[label] = texts
    return found


def aside(obj: Any) -> dict[str, Any] | None:
    """What the Galera cluster page or the RAID host page shows of EBS; None when nothing."""
    if isinstance(obj, Cluster):
        placements = galera_placements(obj)
        if not placements:
            return None
        return {"kind": "galera", "nodes": sorted(placements.items())}
    if isinstance(obj, Host):
        own, domains = raid_placements(obj)
        if own is None and not domains:
            return None
        return {
            "kind": "raid",
            "own": own,
            "domains": sorted(domains.items()),
            **_legs(obj, domains),
        }
    return None


def _legs(host: Host, domains: dict[str, Placement]) -> dict[str, Any]:
    """Per leg (an array of devices), the volumes behind each member; per top array, when it
    slows."""
    arrays = list(Array.objects.filter(host=host, present=True).order_by("position", "name"))
    members: dict[int, list[tuple[str, str]]] = {a.pk: [] for a in arrays}
    for m in Member.objects.filter(array__in=arrays, is_array=False).order_by("array", "role"):
        members[m.array_id].append((m.device, m.domain or m.device))
    legs = {a.pk: leg(a.name, members[a.pk], domains) for a in arrays if members[a.pk]}
    children: dict[int | None, list[Array]] = {}
    for a in arrays:
        children.setdefault(a.parent_id, []).append(a)

    def leaves(a: Array) -> list:
        below = children.get(a.pk, [])
        found = [legs[a.pk]] if a.pk in legs else []
        return found + [x for child in below for x in leaves(child)]

    headlines = [h for top in children.get(None, []) if (h := slows(top.name, leaves(top)))]
    shown = [g for g in legs.values() if any(m.volumes for m in g.members)]
    return {"legs": shown, "headlines": headlines}
