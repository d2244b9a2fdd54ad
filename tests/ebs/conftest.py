"""EBS fixtures: an account-region on the moto server, volumes of every type attached to
instances, and CloudWatch minutes put with ``put_metric_data`` as AWS would publish them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import boto3
import pytest

from apps.ebs.models import RegionCollection
from apps.regions.models import Account, Region

AMI = "ami-12c6146b"


@pytest.fixture
def account(aws) -> Account:
    return Account.objects.create(name="Test account")


@pytest.fixture
def region(account) -> Region:
    return Region.objects.create(
        account=account, code="us-east-1", opt_in_status="opt-in-not-required"
    )


@pytest.fixture
def collection(region) -> RegionCollection:
    return RegionCollection.objects.create(region=region)


def boto(service: str, aws_url: str, region: str = "us-east-1"):
    return boto3.client(service, region_name=region, endpoint_url=aws_url)


def run_instance(
    aws_url: str,
    name: str,
    address: str,
    instance_type: str = "m5.large",
    region: str = "us-east-1",
) -> str:
    ec2 = boto("ec2", aws_url, region)
    found = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType=instance_type,
        PrivateIpAddress=address,
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": name}]}],
    )
    return found["Instances"][0]["InstanceId"]


def volume(
    aws_url: str,
    volume_type: str,
    size: int,
    name: str,
    instance: str | None = None,
    device: str = "/dev/sdf",
    region: str = "us-east-1",
    tags: dict[str, str] | None = None,
    **kw,
) -> str:
    ec2 = boto("ec2", aws_url, region)
    tag_list = [{"Key": "Name", "Value": name}] + [
        {"Key": k, "Value": v} for k, v in (tags or {}).items()
    ]
    found = ec2.create_volume(
        AvailabilityZone=f"{region}a",
        Size=size,
        VolumeType=volume_type,
        TagSpecifications=[{"ResourceType": "volume", "Tags": tag_list}],
        **kw,
    )
    if instance:
        ec2.attach_volume(VolumeId=found["VolumeId"], InstanceId=instance, Device=device)
    return found["VolumeId"]


def put(
    aws_url: str,
    namespace: str,
    dimensions: dict[str, str],
    values: dict[str, Iterable[float]],
    start: datetime,
    step: timedelta = timedelta(minutes=1),
    region: str = "us-east-1",
) -> None:
    """``{metric: [value per step from start]}`` into moto's CloudWatch (a value of None is a
    minute left out)."""
    cw = boto("cloudwatch", aws_url, region)
    dims = [{"Name": k, "Value": v} for k, v in dimensions.items()]
    data = []
    for metric, series in values.items():
        for i, value in enumerate(series):
            if value is None:
                continue
            data.append(
                {
                    "MetricName": metric,
                    "Dimensions": dims,
                    "Timestamp": start + i * step,
                    "Value": float(value),
                }
            )
    for i in range(0, len(data), 500):
        cw.put_metric_data(Namespace=namespace, MetricData=data[i : i + 500])
