"""The IAM policy Vigil needs in a watched account: exactly the calls it makes, read-only.

Pure: no Django, no I/O. ``ACTIONS`` lists each AWS API call the regions and EFS adapters
make, and a concern declares its own (``Concern.aws_actions``), passed in as ``extra`` (the
test in tests/regions/test_firstrun.py reads the adapters' source to keep it exact); the trust
policy lets the account Vigil runs in assume the role with an external id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

#: (IAM action, where Vigil makes that call)
ACTIONS: tuple[tuple[str, str], ...] = (
    ("ec2:DescribeRegions", "apps/regions/ec2.py: which regions the account has"),
    ("account:ListRegions", "apps/regions/ec2.py: opt-in status in transition (optional)"),
    ("elasticfilesystem:DescribeFileSystems", "apps/efs/elasticfilesystem.py: the file systems"),
    (
        "elasticfilesystem:DescribeReplicationConfigurations",
        "apps/efs/elasticfilesystem.py: their replicas (optional: refused, none are judged)",
    ),
    ("cloudwatch:GetMetricData", "apps/efs/cloudwatch.py: the EFS metrics"),
)


def actions(extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """``ACTIONS`` and ``extra``, each action once (the first place that calls it)."""
    seen: dict[str, str] = {}
    for action, where in (*ACTIONS, *extra):
        seen.setdefault(action, where)
    return list(seen.items())


def permissions_policy(extra: Iterable[tuple[str, str]] = ()) -> str:
    """The role's permissions policy as JSON to paste into IAM (``extra``: the concerns')."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "VigilReadOnly",
                    "Effect": "Allow",
                    "Action": sorted(action for action, _ in actions(extra)),
                    "Resource": "*",
                }
            ],
        },
        indent=2,
    )


def trust_policy(principal_arn: str, external_id: str) -> str:
    """Who may assume the role: Vigil's own identity, with the external id."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": principal_arn or "arn:aws:iam::<VIGIL_ACCOUNT_ID>:root"},
                    "Action": "sts:AssumeRole",
                    "Condition": {"StringEquals": {"sts:ExternalId": external_id}},
                }
            ],
        },
        indent=2,
    )
