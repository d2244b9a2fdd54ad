"""Adapter for the EFS API: list an account-region's file systems (``describe_file_systems``).

boto3 calls only; returns dataclasses. Clients come from ``apps.lib.aws``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from apps.lib import aws
from apps.lib.aws import AccountAccess

PAGE_SIZE = 100  # describe_file_systems' MaxItems ceiling is 100


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
    )
