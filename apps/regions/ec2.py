"""Adapter: which regions an account has, from EC2 and (where permitted) the Account API."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from botocore.exceptions import BotoCoreError, ClientError

from apps.lib import aws

log = logging.getLogger(__name__)

# The Account API's words for opt-in status, in EC2's vocabulary (plus the transitions).
ACCOUNT_API_STATUS = {
    "ENABLED_BY_DEFAULT": "opt-in-not-required",
    "ENABLED": "opted-in",
    "ENABLING": "enabling",
    "DISABLING": "disabling",
    "DISABLED": "not-opted-in",
}


@dataclass(frozen=True)
class RegionInfo:
    code: str
    opt_in_status: str

    USABLE: ClassVar[tuple[str, ...]] = ("opt-in-not-required", "opted-in")

    @property
    def usable(self) -> bool:
        return self.opt_in_status in self.USABLE


def describe_regions(access: aws.AccountAccess, home_region: str) -> list[RegionInfo]:
    """Every region of the partition with the account's opt-in status for it."""
    ec2 = aws.client("ec2", home_region, access)
    found = {
        r["RegionName"]: r.get("OptInStatus", "opt-in-not-required")
        for r in ec2.describe_regions(AllRegions=True)["Regions"]
    }
    found.update(_account_api_statuses(access, home_region))
    return [RegionInfo(code, status) for code, status in sorted(found.items())]


def _account_api_statuses(access: aws.AccountAccess, home_region: str) -> dict[str, str]:
    """The Account API knows transitions (ENABLING) that EC2 does not; it needs extra rights."""
    try:
        client = aws.client("account", home_region, access)
        statuses = {}
        for page in client.get_paginator("list_regions").paginate():
            for r in page["Regions"]:
                status = ACCOUNT_API_STATUS.get(r.get("RegionOptStatus", ""))
                if status:
                    statuses[r["RegionName"]] = status
        return statuses
    except (ClientError, BotoCoreError) as exc:
        log.info("Account API not available for opt-in status: %s", aws.describe_error(exc))
        return {}


@cache
def _region_descriptions() -> dict[str, str]:
    import botocore.session

    endpoints = botocore.session.get_session().get_data("endpoints")
    return {
        code: data.get("description", code)
        for partition in endpoints["partitions"]
        for code, data in partition.get("regions", {}).items()
    }


def region_name(code: str) -> str:
    """A person's name for a region code, from botocore's bundled endpoint data."""
    return _region_descriptions().get(code, code)
