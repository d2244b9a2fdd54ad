"""Adapter for the EC2 API: an account-region's EBS volumes (``DescribeVolumes``) and the
instances they are attached to (``DescribeInstances``), both through boto3's paginators.

boto3 calls only; returns dataclasses. Clients come from ``apps.lib.aws``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from apps.lib import aws
from apps.lib.aws import AccountAccess

PAGE_SIZE = 500  # DescribeVolumes' MaxResults ceiling is 500
#: Ids per ``instance-id`` filter: a filter, not ``InstanceIds``, so that an instance that went
#: away between the two calls is left out instead of failing the call (InvalidInstanceID).
INSTANCE_IDS_PER_CALL = 200


@dataclass(frozen=True)
class Attachment:
    instance_id: str
    device: str
    state: str


@dataclass(frozen=True)
class VolumeInfo:
    id: str
    name: str
    volume_type: str
    size_gib: int
    iops: int | None
    throughput_mibps: int | None
    state: str
    availability_zone: str
    multi_attach: bool
    created_at: datetime | None
    attachments: tuple[Attachment, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InstanceInfo:
    id: str
    name: str
    instance_type: str
    state: str
    private_ips: tuple[str, ...]
    root_device: str
    tags: dict[str, str] = field(default_factory=dict)


def _tags(item: dict) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in item.get("Tags") or []}


def _when(value: object) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    return value if isinstance(value, datetime) else None


def describe_volumes(
    region: str, access: AccountAccess | None = None, *, page_size: int = PAGE_SIZE
) -> list[VolumeInfo]:
    """Every volume of the region, every page."""
    client = aws.client("ec2", region, access or AccountAccess())
    found = []
    pages = client.get_paginator("describe_volumes").paginate(
        PaginationConfig={"PageSize": page_size}
    )
    for page in pages:
        for v in page.get("Volumes", []):
            tags = _tags(v)
            found.append(
                VolumeInfo(
                    id=v["VolumeId"],
                    name=tags.get("Name", ""),
                    volume_type=v.get("VolumeType", ""),
                    size_gib=int(v.get("Size") or 0),
                    iops=v.get("Iops"),
                    throughput_mibps=v.get("Throughput"),
                    state=v.get("State", ""),
                    availability_zone=v.get("AvailabilityZone", ""),
                    multi_attach=bool(v.get("MultiAttachEnabled")),
                    created_at=_when(v.get("CreateTime")),
                    attachments=tuple(
                        Attachment(a["InstanceId"], a.get("Device", ""), a.get("State", ""))
                        for a in v.get("Attachments") or []
                        if a.get("InstanceId")
                    ),
                    tags=tags,
                )
            )
    return found


def describe_instances(
    region: str, instance_ids: Iterable[str], access: AccountAccess | None = None
) -> list[InstanceInfo]:
    """The instances named (those that still exist), every page."""
    ids = sorted(set(instance_ids))
    if not ids:
        return []
    client = aws.client("ec2", region, access or AccountAccess())
    paginator = client.get_paginator("describe_instances")
    found = []
    for i in range(0, len(ids), INSTANCE_IDS_PER_CALL):
        chunk = ids[i : i + INSTANCE_IDS_PER_CALL]
        for page in paginator.paginate(Filters=[{"Name": "instance-id", "Values": chunk}]):
            for reservation in page.get("Reservations", []):
                for inst in reservation.get("Instances", []):
                    tags = _tags(inst)
                    addresses = [inst.get("PrivateIpAddress")]
                    for nic in inst.get("NetworkInterfaces") or []:
                        addresses += [
                            a.get("PrivateIpAddress") for a in nic.get("PrivateIpAddresses") or []
                        ]
                    found.append(
                        InstanceInfo(
                            id=inst["InstanceId"],
                            name=tags.get("Name", ""),
                            instance_type=inst.get("InstanceType", ""),
                            state=(inst.get("State") or {}).get("Name", ""),
                            private_ips=tuple(dict.fromkeys(a for a in addresses if a)),
                            root_device=inst.get("RootDeviceName", ""),
                            tags=tags,
                        )
                    )
    return found
