from __future__ import annotations

import pytest

from apps.galera.models import Cluster
from apps.lib.status import Status
from apps.probes.models import Target
from apps.probes.views import region_panel_context as probes_panel
from apps.raid.models import Array, Host
from apps.raid.views import region_panel_context as raid_panel
from apps.regions.models import Region
from apps.regions.panels import severity, worst_first
from apps.regions.views import PANEL_ROWS

pytestmark = pytest.mark.django_db

# Case, accents and digits, where a database's locale and Python's sort disagree.
NAMES = ["beta", "Beta", "alpha", "Zulu", "éclair", "eclair", "10-db", "9-db", "", "_x"]


def test_a_panel_shows_its_worst_rows_in_the_order_pythons_sort_gives(site):
    statuses = [Status.OK, Status.CRITICAL, Status.WARNING, Status.UNKNOWN]
    for n, name in enumerate(NAMES * 3):
        Target.objects.create(
            region=site,
            name=name,
            url=f"https://127.0.0.1:{8000 + n}/",
            status=statuses[n % len(statuses)],
        )
    everything = sorted(
        Target.objects.filter(region=site), key=lambda t: (-t.status_enum.severity, str(t))
    )
    for limit in (1, 7, PANEL_ROWS, None):
        panel = probes_panel(site, limit)
        assert [str(t) for t in panel["targets"]] == [str(t) for t in everything[:limit]]
        assert panel["total"] == len(everything)


def test_an_empty_panel_counts_none(site):
    rows, total = worst_first(Cluster.objects.filter(region=site), severity(), "name", limit=5)
    assert (rows, total) == ([], 0)


def test_a_host_ranks_by_its_worst_present_array_and_one_without_arrays_as_unknown(site):
    quiet = Host.objects.create(name="quiet", region=site)
    broken = Host.objects.create(name="broken", region=site)
    fine = Host.objects.create(name="fine", region=site)
    Array.objects.create(host=broken, region=site, name="md0", status=Status.CRITICAL)
    Array.objects.create(host=fine, region=site, name="md0", status=Status.OK)
    # a gone array does not count
    Array.objects.create(host=fine, region=site, name="md9", status=Status.CRITICAL, present=False)
    panel = raid_panel(site, 2)
    assert [row.host for row in panel["rows"]] == [broken, quiet]
    assert [row.status for row in panel["rows"]] == [Status.CRITICAL, Status.UNKNOWN]
    assert panel["total"] == 3
    assert [row.host for row in raid_panel(site, None)["rows"]] == [broken, quiet, fine]


def test_another_regions_subjects_are_neither_shown_nor_counted(site):
    other = Region.objects.create(kind=Region.Kind.SITE, code="annex", name="Annex")
    Cluster.objects.create(region=other, name="elsewhere", status=Status.CRITICAL)
    Cluster.objects.create(region=site, name="here")
    rows, total = worst_first(Cluster.objects.filter(region=site), severity(), "name", limit=5)
    assert [c.name for c in rows] == ["here"]
    assert total == 1
