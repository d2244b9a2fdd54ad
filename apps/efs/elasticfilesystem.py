"""Adapter for the EFS API: list an account-region's file systems (``describe_file_systems``),
their replication configurations (``describe_replication_configurations``) and their mount
targets' addresses (``describe_mount_targets``: NFS clients that mount by address).

boto3 calls only; returns dataclasses. Clients come from ``apps.lib.aws``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from botocore.exceptions import ClientError

from apps.lib import aws
from apps.lib.aws import AccountAccess

PAGE_SIZE = 100  # describe_file_systems' MaxItems ceiling is 100
_FS_ID = re.compile(r"(fs-[0-9a-f]{8,40})$")


@dataclass(frozen=True)
class FileSystemInfo:
    id: str
    name: str
    performance_mode: str
    throughput_mode: str
    provisioned_mibps: float | None
    size_total_bytes: int | None
    size_standard_bytes: int | None
    size_ia_bytes: int | None
    created_at: datetime | None
    tags: dict[str, str] = field(default_factory=dict)
    size_archive_bytes: int | None = None
    #: One Zone file systems name their Availability Zone; Regional ones have none.
    availability_zone_name: str = ""


@dataclass(frozen=True)
class Replica:
    """One destination of a file system's replication configuration."""

    destination_id: str
    region: str
    status: str  # ENABLED, ENABLING, DELETING, ERROR, PAUSED, PAUSING
    last_replicated: datetime | None = None


def describe_file_systems(
    region: str, access: AccountAccess | None = None, *, page_size: int = PAGE_SIZE
) -> list[FileSystemInfo]:
    """Every file system of the region, following ``NextMarker``."""
    client = aws.client("efs", region, access or AccountAccess())
    found: list[FileSystemInfo] = []
    kwargs: dict = {"MaxItems": page_size}
    while True:
        page = client.describe_file_systems(**kwargs)
        found.extend(_info(fs) for fs in page.get("FileSystems", []))
        marker = page.get("NextMarker")
        if not marker:
            return found
        kwargs["Marker"] = marker


def _info(fs: dict) -> FileSystemInfo:
    tags = {t["Key"]: t["Value"] for t in fs.get("Tags", [])}
    size = fs.get("SizeInBytes") or {}
    created = fs.get("CreationTime")
    if isinstance(created, int | float):
        created = datetime.fromtimestamp(created, UTC)
    return FileSystemInfo(
        id=fs["FileSystemId"],
        name=fs.get("Name") or tags.get("Name", ""),
        performance_mode=fs.get("PerformanceMode", "generalPurpose"),
        throughput_mode=fs.get("ThroughputMode", "bursting"),
        provisioned_mibps=fs.get("ProvisionedThroughputInMibps"),
        size_total_bytes=size.get("Value"),
        size_standard_bytes=size.get("ValueInStandard"),
        size_ia_bytes=size.get("ValueInIA"),
        size_archive_bytes=size.get("ValueInArchive"),
        created_at=created,
        tags=tags,
        availability_zone_name=str(fs.get("AvailabilityZoneName") or "")[:64],
    )


#: Error codes that mean "nothing to say", not a failed discovery: no replication at all, or an
#: account whose policy does not grant DescribeReplicationConfigurations (the rest of
#: discovery goes on; the file systems' replicas stay as they were).
QUIET_REPLICATION_ERRORS = {"ReplicationNotFound", "AccessDeniedException", "AccessDenied"}


def describe_replications(
    region: str, access: AccountAccess | None = None
) -> dict[str, list[Replica]] | None:
    """Each source file system of the region's replication destinations, following
    ``NextToken``; None when AWS refuses to say (``QUIET_REPLICATION_ERRORS`` but not found)."""
    client = aws.client("efs", region, access or AccountAccess())
    found: dict[str, list[Replica]] = {}
    kwargs: dict = {"MaxResults": PAGE_SIZE}
    while True:
        try:
            page = client.describe_replication_configurations(**kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "ReplicationNotFound":
                return found
            if code in QUIET_REPLICATION_ERRORS:
                return None
            raise
        for replication in page.get("Replications", []):
            if replication.get("SourceFileSystemRegion", region) != region:
                continue  # a replica here of a file system elsewhere: its source judges it
            source = _fs_id(replication.get("SourceFileSystemId", ""))
            if source:
                found.setdefault(source, []).extend(_replicas(replication))
        token = page.get("NextToken")
        if not token:
            return found
        kwargs["NextToken"] = token


def describe_mount_targets(
    region: str, filesystem_ids: list[str], access: AccountAccess | None = None
) -> dict[str, list[str]] | None:
    """Each file system's mount targets' IPv4 and IPv6 addresses, following ``NextMarker``;
    None when AWS refuses to say (the permission is optional: clients that mount by address
    are then not tied to their file system)."""
    client = aws.client("efs", region, access or AccountAccess())
    found: dict[str, list[str]] = {}
    for fs_id in filesystem_ids:
        kwargs: dict = {"FileSystemId": fs_id, "MaxItems": PAGE_SIZE}
        while True:
            try:
                page = client.describe_mount_targets(**kwargs)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in ("AccessDeniedException", "AccessDenied"):
                    return None
                if code == "FileSystemNotFound":
                    break
                raise
            for target in page.get("MountTargets", []):
                for key in ("IpAddress", "Ipv6Address"):
                    if target.get(key):
                        found.setdefault(fs_id, []).append(str(target[key])[:45])
            marker = page.get("NextMarker")
            if not marker:
                break
            kwargs["Marker"] = marker
    return found


def _fs_id(text: str) -> str:
    """``fs-…`` from an id or an ARN, or "" when it is neither."""
    match = _FS_ID.search(str(text)[:256])
    return match.group(1) if match else ""


def _replicas(replication: dict) -> list[Replica]:
    out = []
    for d in replication.get("Destinations", [])[:16]:
        destination = _fs_id(d.get("FileSystemId", ""))
        if not destination:
            continue
        last = d.get("LastReplicatedTimestamp")
        if isinstance(last, int | float):
            last = datetime.fromtimestamp(last, UTC)
        out.append(
            Replica(
                destination,
                str(d.get("Region", ""))[:32],
                str(d.get("Status", ""))[:16].upper(),
                last if isinstance(last, datetime) else None,
            )
        )
    return out
