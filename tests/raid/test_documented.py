"""The md-RAID facts (apps/raid/kernel.py) and the disk facts (apps/raid/smart.py) each cite
where they were read, as a link, and when; docs/raid.md links every one of those sources."""

from __future__ import annotations

import re

import pytest

from apps.raid import kernel, smart
from tests.helpers import ROOT

FACTS = {**{f"kernel:{k}": f for k, f in kernel.FACTS.items()}}
FACTS |= {f"smart:{k}": f for k, f in smart.FACTS.items()}
URL = re.compile(r"https://[^\s;,)]+")


@pytest.mark.parametrize("name", sorted(FACTS))
def test_every_fact_links_its_source_and_says_when_it_was_read(name):
    fact = FACTS[name]
    assert URL.search(fact.source), f"{name}: no https:// link in {fact.source!r}"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", fact.read), name


def test_the_raid_page_links_every_source_and_names_the_day_read():
    page = (ROOT / "docs" / "raid.md").read_text()
    section = page[page.index("## What the kernel and mdadm say") :]
    missing = sorted(
        {url.rstrip(".") for f in FACTS.values() for url in URL.findall(f.source)}
        - set(re.findall(r"\]\((https://[^)\s]+)\)", section))
    )
    assert not missing, "docs/raid.md should link:\n" + "\n".join(missing)
    assert {f.read for f in FACTS.values()} == {"2026-11-26"}
    assert "read on 2026-11-26" in section
