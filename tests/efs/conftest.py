"""EFS fixtures: an account with two regions on the moto server (the fleet ``responder`` is in
tests/plugins/aws.py, shared with the fault suite)."""

from __future__ import annotations

import boto3
import pytest

from apps.efs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG
from apps.efs.models import RegionCollection
from apps.regions.models import Account, Region


@pytest.fixture
def account(aws) -> Account:
    return Account.objects.create(name="Test account")


@pytest.fixture
def region(account) -> Region:
    return Region.objects.create(
        account=account, code="us-east-1", opt_in_status="opt-in-not-required"
    )


@pytest.fixture
def other_region(account) -> Region:
    return Region.objects.create(
        account=account, code="eu-west-1", opt_in_status="opt-in-not-required"
    )


@pytest.fixture
def collection(region) -> RegionCollection:
    return RegionCollection.objects.create(region=region)


def boto(service: str, aws_url: str, region: str = "us-east-1"):
    return boto3.client(service, region_name=region, endpoint_url=aws_url)


def create_filesystems(aws_url: str, n: int, region: str = "us-east-1", profile: str = "", **kw):
    """``n`` file systems in moto; with ``profile`` the fleet responder serves their metrics."""
    efs = boto("efs", aws_url, region)
    ids = []
    for i in range(n):
        tags = [{"Key": "Name", "Value": f"fs-{region}-{i:03d}"}]
        if profile:
            tags += [{"Key": PROFILE_TAG, "Value": profile}, {"Key": PHASE_TAG, "Value": str(i)}]
        ids.append(
            efs.create_file_system(CreationToken=f"t-{region}-{i}", Tags=tags, **kw)["FileSystemId"]
        )
    return ids
