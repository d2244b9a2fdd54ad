"""What Galera's documentation says of the variables and options Vigil reads: one table, with
its sources and the day they were read, and where today's pages disagree with each other, with
Galera's source or with the 2018 rules Vigil began from, which one Vigil follows.

docs/galera.md shows the same table (``tests/galera/test_documented.py`` holds
them together). Pure module: constants only.
"""

from __future__ import annotations

from dataclasses import dataclass

READ_ON = "2026-11-26"

CODERSHIP_STATUS = "https://galeracluster.com/library/documentation/galera-status-variables.html"
CODERSHIP_MONITORING = "https://galeracluster.com/library/documentation/monitoring-cluster.html"
CODERSHIP_PARAMETERS = "https://galeracluster.com/library/documentation/galera-parameters.html"
CODERSHIP_QUORUM = "https://galeracluster.com/library/documentation/weighted-quorum.html"
MARIADB_STATUS = "https://mariadb.com/docs/galera-cluster/reference/galera-cluster-status-variables"
# Recovery after the Primary component is lost (apps/galera/recovery.py), read on READ_ON.
MARIADB_QUORUM_RESET = "https://mariadb.com/docs/galera-cluster/high-availability/resetting-the-quorum-cluster-bootstrap"
MARIADB_BOOTSTRAP = "https://mariadb.com/docs/service-management/operations/start-stop-status/bootstrap-galera-cluster/"
CODERSHIP_CRASH_RECOVERY = "https://galeracluster.com/library/documentation/crash-recovery.html"
CODERSHIP_RESTARTING = "https://galeracluster.com/documentation-webpages/restartingcluster.html"
#: The replication window (how long a node may be down and still rejoin by IST), read on READ_ON.
SEVERALNINES_WINDOW = (
    "https://severalnines.com/blog/using-galera-replication-window-advisor-avoid-sst"
)
# Galera 26.4.18, the 4.x branch as published (2024-03-22); MariaDB 10.11 here ships 26.4.23.
GALERA_SOURCE = "https://github.com/codership/galera/blob/0bc393fb70f7a3462d512b642dd6395b9e8a7325"

#: Documented defaults Vigil relies on (galera-parameters, weighted-quorum).
PC_WEIGHT_DEFAULT = 1
PC_WEIGHT_MAX = 255
EVS_SUSPECT_TIMEOUT_S = 5.0  # PT5S
EVS_AUTO_EVICT_DEFAULT = 0  # auto eviction off


@dataclass(frozen=True)
class Fact:
    """One variable or option: what the sources say, and what Vigil does with it."""

    name: str
    documented: str
    vigil: str
    sources: tuple[str, ...]


FACTS: tuple[Fact, ...] = (
    Fact(
        "wsrep_flow_control_paused_ns",
        "Total time paused by flow control, in nanoseconds (Codership, MariaDB). Galera's source keeps it "
        "through FLUSH STATUS (gcs/src/gcs_sm.cpp): only a restart sets it back to 0.",
        "Judged: its increase between two polls over the time between them is the share of "
        "that interval the node was paused; a reading below the previous one is a restart, "
        "counted from 0.",
        (CODERSHIP_STATUS, MARIADB_STATUS, GALERA_SOURCE + "/gcs/src/gcs_sm.cpp"),
    ),
    Fact(
        "wsrep_flow_control_paused",
        "Fraction of time paused since the last FLUSH STATUS (Codership, MariaDB); since the "
        "node started or the last FLUSH STATUS (Galera's source). Vigil's 2018 rule read it as "
        "the state now.",
        "A lifetime average: judged only for a node that does not report "
        "wsrep_flow_control_paused_ns, and the reason says so.",
        (CODERSHIP_STATUS, MARIADB_STATUS, GALERA_SOURCE + "/gcs/src/gcs_sm.cpp"),
    ),
    Fact(
        "wsrep_local_recv_queue",
        "Write-sets waiting to be applied, now (Codership, MariaDB).",
        "Judged: above the threshold on two polls in a row, or rising on three.",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "wsrep_local_recv_queue_avg",
        "Average since the last FLUSH STATUS (Codership's variable reference; Galera's source, "
        "galerautils/src/gu_fifo.c); since the last status query (Codership's monitoring page, "
        "MariaDB, and Vigil's 2018 rule). Galera's source is followed: a lifetime average.",
        "Judged only for a node that does not report wsrep_local_recv_queue, and the reason "
        "says so.",
        (
            CODERSHIP_STATUS,
            CODERSHIP_MONITORING,
            MARIADB_STATUS,
            GALERA_SOURCE + "/galerautils/src/gu_fifo.c",
        ),
    ),
    Fact(
        "wsrep_local_send_queue",
        "Write-sets waiting to be sent, now (Codership, MariaDB).",
        "Judged: above the threshold on two polls in a row (stored, never judged before).",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "wsrep_local_send_queue_avg",
        "Average since the last FLUSH STATUS (Codership); since the most recent status query "
        "(MariaDB).",
        "Stored and shown, not judged.",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "wsrep_flow_control_sent",
        "FC_PAUSE events this node sent; not reset by a query (Codership); since the most "
        "recent status query (MariaDB). Galera's source resets it on FLUSH STATUS only "
        "(gcs/src/gcs.cpp).",
        "Its increase between polls names the nodes that asked for the pause; a reading below "
        "the previous one counts from 0.",
        (CODERSHIP_STATUS, MARIADB_STATUS, GALERA_SOURCE + "/gcs/src/gcs.cpp"),
    ),
    Fact(
        "wsrep_flow_control_requested",
        "Whether this node asks for a replication pause now (its receive queue is too long; "
        "Codership).",
        "Names the node in the flow-control warning, with those whose "
        "wsrep_flow_control_sent grew.",
        (CODERSHIP_STATUS,),
    ),
    Fact(
        "wsrep_cluster_weight",
        "Sum of pc.weight of the nodes in the current Primary Component (Codership, MariaDB; Galera 3.24 "
        "on); 0 on a node outside one (Galera's source, gcomm/src/pc_proto.cpp).",
        "The total weight in the quorum arithmetic: what the nodes Vigil reads do not hold is "
        "the weight of garbd and of the nodes it does not read (each 1 when it adds up to one "
        "each, the worst case otherwise, said in the reason).",
        (CODERSHIP_STATUS, MARIADB_STATUS, GALERA_SOURCE + "/gcomm/src/pc_proto.cpp"),
    ),
    Fact(
        "pc.weight",
        f"A member's weight in the quorum, {PC_WEIGHT_DEFAULT} by default, 0 to "
        f"{PC_WEIGHT_MAX}, dynamic. A component stays Primary only when its weight is more "
        "than half of the previous Primary Component's, less those that left cleanly.",
        "Read from each node's wsrep_provider_options; a value outside 0..255 is ignored.",
        (CODERSHIP_PARAMETERS, CODERSHIP_QUORUM),
    ),
    Fact(
        "wsrep_local_state_uuid",
        "The state UUID of this node's data; when it matches wsrep_cluster_state_uuid the node "
        "is in sync with the cluster (Codership, MariaDB).",
        "A Primary node whose two UUIDs differ has diverged: critical, unless it is joining "
        "(a state transfer will replace its data): a warning then.",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "wsrep_desync_count",
        "Operations in progress that hold the node desynced (wsrep_desync, RSU, a donor; "
        "Galera 3.8 on).",
        "Shown in the reason beside a Donor/Desynced node.",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "wsrep_evs_delayed",
        "Members on this node's delayed list, uuid:address:count (Codership, MariaDB; Galera 3.8 on). "
        "Codership's evs.auto_evict page says the node keeps watching with auto eviction off; "
        "Galera 4's source fills the list only while evs.auto_evict is set "
        "(gcomm/src/evs_proto.cpp), as the test cluster shows: the source is followed.",
        "A warning naming each delayed member (a node's name from its wsrep_gcomm_uuid) with "
        "its count against evs.auto_evict: the cluster is about to evict it.",
        (CODERSHIP_STATUS, MARIADB_STATUS, GALERA_SOURCE + "/gcomm/src/evs_proto.cpp"),
    ),
    Fact(
        "wsrep_evs_evict_list",
        "UUIDs of the nodes evicted from the cluster; they cannot rejoin until their mysqld "
        "restarts (Codership, MariaDB).",
        "Critical, naming each evicted member (as a node cut from the group is).",
        (CODERSHIP_STATUS, MARIADB_STATUS),
    ),
    Fact(
        "evs.auto_evict",
        f"Delayed-list entries a member may have before it is evicted; "
        f"{EVS_AUTO_EVICT_DEFAULT} (the default) turns auto eviction off. Documented as not "
        "dynamic; Galera's source sets it at runtime, as the test cluster does.",
        "Shown beside a delayed member's count.",
        (CODERSHIP_PARAMETERS, GALERA_SOURCE + "/gcomm/src/evs_proto.cpp"),
    ),
    Fact(
        "evs.suspect_timeout",
        f"Inactivity after which a member is suspected dead, PT{EVS_SUSPECT_TIMEOUT_S:g}S by "
        "default.",
        'The headroom\'s "one at a time" means failures at least this far apart.',
        (CODERSHIP_PARAMETERS,),
    ),
    Fact(
        "gcs.sync_donor",
        "NO by default: a desynced node (a donor; on MariaDB also a node holding FLUSH TABLES "
        "WITH READ LOCK) sends no flow control (Galera's source, gcs/src/gcs.cpp), so the "
        "cluster does not wait for it. Documented as not dynamic; the source sets it at runtime.",
        "Not read. The flow-control test sets it on the node it holds, so that the hold pauses "
        "the cluster.",
        (CODERSHIP_PARAMETERS, GALERA_SOURCE + "/gcs/src/gcs.cpp"),
    ),
)
