"""Mountstats texts of EFS clients for the tests: a real published NFSv4.1 sample
(tests/fixtures/mountstats/nfs41-k8s-procfs.txt) with its server named as an EFS file system and
its counters scaled, so that two pushes differ by known amounts."""

from __future__ import annotations

import re
from pathlib import Path

SAMPLE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "mountstats" / "nfs41-k8s-procfs.txt"
).read_text()
DEVICE = "fs.example.com:/volume4/apps/home-automation/node-red-data"


def mountstats(
    server: str = "fs-0123abcd.efs.us-east-1.amazonaws.com",
    *,
    read_bytes: int = 0,
    write_bytes: int = 0,
    reads: int = 0,
    writes: int = 0,
    age: int = 1000,
    mountpoint: str = "/mnt/efs",
) -> str:
    """The sample as a client of ``server`` whose server-side byte counters and READ/WRITE
    operations are the given numbers (other operations as published)."""
    text = SAMPLE.replace(DEVICE, f"{server}:/").replace(
        "/var/lib/kubelet/pods/1c2215a7-0d92-4df5-83ce-a807bcc2f8c8/volumes/"
        "kubernetes.io~nfs/home-automation--node-red-data--pv0001",
        mountpoint,
    )
    text = re.sub(r"age:\s+\d+", f"age:    {age}", text)
    text = re.sub(
        r"bytes:\s+.*",
        f"bytes:  0 0 0 0 {read_bytes} {write_bytes} 0 0 ",
        text,
    )
    text = re.sub(r"(\s)READ: \d+ \d+ ", rf"\1READ: {reads} {reads} ", text)
    text = re.sub(r"(\s)WRITE: \d+ \d+ ", rf"\1WRITE: {writes} {writes} ", text)
    return text.lstrip("\n")
