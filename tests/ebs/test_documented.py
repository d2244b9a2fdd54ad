"""docs/ebs.md links every source apps/ebs/limits.py and apps/ebs/costs.py read their figures
from, and names the day they were read, as docs/efs.md does for EFS."""

from __future__ import annotations

import re

from apps.ebs import costs, limits
from tests.helpers import ROOT

URL = re.compile(r"https://[^\s;,)]+")


def section() -> str:
    page = (ROOT / "docs" / "ebs.md").read_text()
    start = page.index("## EBS: documented figures")
    end = page.find("\n## ", start + 1)
    return page[start : end if end > 0 else None]


def test_the_ebs_page_links_every_source_of_the_metrics_limits_and_prices():
    cited = {u.rstrip(".:") for doc in (limits.__doc__, costs.__doc__) for u in URL.findall(doc)}
    cited |= {limits.SOURCE_METRICS, limits.SOURCE_INSTANCE}
    cited |= {f.source for f in limits.VOLUME_METRICS + limits.INSTANCE_METRICS}
    linked = set(re.findall(r"\]\((https://[^)\s]+)\)", section()))
    assert sorted(cited - linked) == []


def test_the_ebs_page_names_the_day_the_figures_were_read_and_the_prices_it_shows():
    text = section()
    assert f"all read on {limits.READ_ON}" in text
    assert f"read {limits.READ_ON}" in costs.PRICES["us-east-1"].source
    shown = {float(x) for x in re.findall(r"\$(\d+\.\d+)", text)}
    us = costs.PRICES["us-east-1"]
    for price in (us.gp2, us.gp3, us.gp3_iops, us.gp3_mibps, us.io1, us.io_iops, us.st1, us.sc1):
        assert price in shown, price
    assert us.standard in shown
