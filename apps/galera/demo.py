"""Demo mode: clusters whose state comes from recorded real ``SHOW STATUS`` outputs.

``set_up()`` (idempotent) adds two clusters, one node each: the MariaDB one in the demo AWS
region (beside its EFS file systems, RAID host and probes), the Percona one on the demo site
outside AWS, whose status is the
published sample named by ``Node.recorded_sample`` (``recorded.py``). The
poll task reads the sample instead of connecting: no network connection is attempted for a
demo cluster. The other members show up through ``wsrep_incoming_addresses``.
"""

from __future__ import annotations

from apps.regions.demo import OUTSIDE_SITE_CODE, OUTSIDE_SITE_NAME, demo_region, demo_site

from .models import Cluster, Node
from .tasks import poll_cluster

# (cluster name, expected data nodes, arbitrators, node host, sample file, in the demo region)
DEMO_CLUSTERS = (
    (
        "Demo: 4-node MariaDB Galera (recorded sample)",
        4,
        0,
        "10.0.0.1",
        "deimosfr-4node-synced-primary.txt",
        True,
    ),
    (
        "Demo: 3-node Percona XtraDB Cluster (recorded sample)",
        3,
        0,
        "172.18.0.2",
        "pxc-docs-docker-3node-elided.txt",
        False,
    ),
)


def set_up() -> list[Cluster]:
    clusters = []
    for name, data_nodes, arbitrators, host, sample, in_region in DEMO_CLUSTERS:
        region = demo_region() if in_region else demo_site(OUTSIDE_SITE_CODE, OUTSIDE_SITE_NAME)
        cluster = Cluster.objects.filter(name=name, is_demo=True).first()
        created = cluster is None
        if cluster is None:
            cluster = Cluster.objects.create(
                region=region,
                name=name,
                expected_data_nodes=data_nodes,
                expected_arbitrators=arbitrators,
                interval_s=300,
            )
        elif cluster.region_id != region.pk:  # moved from an earlier demo's site
            Cluster.objects.filter(pk=cluster.pk).update(region=region)
            cluster.region = region
        if created:
            Cluster.objects.filter(pk=cluster.pk).update(is_demo=True)
            cluster.is_demo = True
        Node.objects.get_or_create(
            cluster=cluster,
            host=host,
            port=3306,
            defaults={"recorded_sample": sample, "user": ""},
        )
        clusters.append(cluster)
        if cluster.polled_at is None:
            poll_cluster(cluster.pk)
    return clusters
