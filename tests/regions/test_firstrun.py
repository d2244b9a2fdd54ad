"""First run: adding the first AWS account, with "Test access" against a moto server."""

from __future__ import annotations

import json
import re

import boto3
import pytest

from apps.regions import concerns, iam
from apps.regions.models import Account
from tests.helpers import ROOT

pytestmark = pytest.mark.django_db

ROLE = "arn:aws:iam::123456789012:role/vigil-read"


def test_the_policy_grants_exactly_the_calls_vigils_adapters_make():
    """Every boto3 call in the adapters that talk to a watched account, as IAM actions: a call
    added to an adapter without its permission (or a permission left over) fails here."""
    services = {
        "ec2": "ec2",
        "account": "account",
        "efs": "elasticfilesystem",
        "cloudwatch": "cloudwatch",
    }
    called = set()
    declared = iam.actions(concerns.aws_actions())  # the concerns' own (``Concern.aws_actions``)
    adapters = {"apps/regions/ec2.py", "apps/efs/elasticfilesystem.py", "apps/lib/cloudwatch.py"}
    adapters |= {where.split(":", 1)[0] for _, where in declared}
    for path in sorted(adapters):
        text = (ROOT / path).read_text()
        in_file = set(re.findall(r'aws\.client\("(\w+)"', text))
        for chunk in re.split(r"\n(?=def )", text):  # a function's calls go to its own client
            found = re.search(r'aws\.client\("(\w+)"', chunk)
            if found is None and len(in_file) != 1:
                continue
            service = found.group(1) if found else next(iter(in_file))
            methods = re.findall(r"\b(?:client|ec2|cw)\.(\w+)\(", chunk)
            methods += re.findall(r'get_paginator\("(\w+)"\)', chunk)
            for method in methods:
                if method in ("get_paginator", "paginate", "client"):
                    continue
                action = "".join(part.capitalize() for part in method.split("_"))
                called.add(f"{services[service]}:{action}")
    granted = set(
        json.loads(iam.permissions_policy(concerns.aws_actions()))["Statement"][0]["Action"]
    )
    assert granted == {a for a, _ in declared}
    assert called == granted


def test_the_home_page_walks_an_admin_to_the_first_account(logged_in_client):
    page = logged_in_client.get("/").content.decode()
    assert 'href="/regions/first-account/"' in page
    form = logged_in_client.get("/regions/first-account/").content.decode()
    assert "elasticfilesystem:DescribeFileSystems" in form and "sts:ExternalId" in form
    assert "ec2:DescribeVolumes" in form and "ec2:DescribeInstances" in form


@pytest.mark.slow
def test_test_access_lists_the_regions_and_file_systems_it_sees_before_saving(
    logged_in_client, aws
):
    efs = boto3.client(
        "efs", "eu-west-1", endpoint_url=aws, aws_access_key_id="x", aws_secret_access_key="x"
    )
    efs.create_file_system(CreationToken="t1", Tags=[{"Key": "Name", "Value": "shared-home"}])
    fields = {
        "name": "Production",
        "role_arn": ROLE,
        "external_id": "ext-123",
        "home_region": "us-east-1",
    }
    page = logged_in_client.post("/regions/first-account/", {**fields, "_try": "1"})
    html = page.content.decode()
    assert page.status_code == 200 and "Vigil runs as" in html
    row = html.split("<code>eu-west-1</code>", 1)[1].split("</tr>", 1)[0]
    assert "1: shared-home" in row
    assert not Account.objects.exists()
    saved = logged_in_client.post("/regions/first-account/", fields)
    assert saved["Location"] == "/" and Account.objects.get().role_arn == ROLE


def test_a_wrong_role_arn_is_said_while_typing(logged_in_client):
    live = logged_in_client.post(
        "/regions/first-account/",
        {
            "name": "x",
            "role_arn": "arn:aws:iam::12:user/me",
            "home_region": "us-east-1",
            "_check": "1",
        },
        headers={"HX-Request": "true", "HX-Trigger-Name": "role_arn"},
    )
    assert "Not an IAM role ARN" in live.content.decode()


def test_a_viewer_may_not_add_an_account(client, viewer):
    client.force_login(viewer)
    assert client.get("/regions/first-account/").status_code == 403
