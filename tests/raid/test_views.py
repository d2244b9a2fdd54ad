"""The region panel and the host page: tree, headroom in words, rebuild figures, history."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.raid.collect import ingest
from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array

pytestmark = pytest.mark.django_db


def test_the_region_page_lists_hosts_with_their_worst_array(logged_in_client, host, site):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=["sdb"]))
    page = logged_in_client.get(f"/regions/{site.pk}/").content.decode()
    assert "md-RAID" in page
    assert f'href="/raid/hosts/{host.pk}/"' in page
    assert "badge-critical" in page
    assert "1 critical" in page and "1 warning" in page and "4 ok" in page
    assert "md1: failed member sdb" in page
    assert "md99 survives the loss of any 1 of the 3 storage servers" in page
    assert f'hx-get="/regions/{site.pk}/panels/raid/"' in page


def test_the_panel_alone_is_served_for_polling(logged_in_client, host, site):
    ingest(host, seed_layout_mdstat())
    page = logged_in_client.get(f"/regions/{site.pk}/panels/raid/").content.decode()
    assert page.lstrip().startswith(f'<div id="raid-panel-{site.pk}"')
    assert "storage-client" in page


def test_the_host_page_shows_the_tree_the_headroom_and_the_rebuild(logged_in_client, host):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(rebuilding="sdh", percent=37.4))
    page = logged_in_client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert page.index("<code>md99</code>") < page.index("<code>md5</code>")
    assert page.count('class="raid-tree"') == 1  # md1..md5 nested under md99
    assert "md99 survives the loss of any 1 of the 3 storage servers" in page
    assert 'value="37.4"' in page
    assert "144.7 MiB/s" in page and "(148213 KiB/s)" in page
    assert "1 h 16 min" in page
    assert "rebuilding" in page and "storage-b" in page
    assert "ok → <strong>critical</strong>" in page
    assert "Latest raw report" in page and "md99 : active raid0" in page


def test_the_host_page_answers_htmx_with_the_live_part_only(logged_in_client, host):
    ingest(host, seed_layout_mdstat())
    page = logged_in_client.get(f"/raid/hosts/{host.pk}/", HTTP_HX_REQUEST="true")
    text = page.content.decode()
    assert text.lstrip().startswith('<div id="live"')
    assert "<html" not in text


def test_admins_issue_a_token_shown_once(logged_in_client, host):
    client = logged_in_client  # an admin
    page = client.post(f"/raid/hosts/{host.pk}/token").content.decode()
    host.refresh_from_db()
    start = page.index("vgh_")
    token = page[start : page.index("<", start)]
    assert host.token_matches(token)
    again = client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert token not in again
    assert host.token_hint in again


def test_others_may_not_issue_tokens(client, django_user_model, operator, host):
    staff = django_user_model.objects.create_user("staff", "s@example.com", "pw", is_staff=True)
    for someone in (operator, staff):
        client.force_login(someone)
        assert "push token" not in client.get(f"/raid/hosts/{host.pk}/").content.decode()
        response = client.post(f"/raid/hosts/{host.pk}/token")
        assert response.status_code == 403
    host.refresh_from_db()
    assert not host.token_hash


@pytest.mark.slow
def test_it_reads_the_host_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    # SMALL's largest host has 3 arrays (RAID-0 over two mirrors), BIGGER's has 6.
    assert queries(logged_in_client, "host", **SMALL) == queries(logged_in_client, "host", **BIGGER)


def test_a_new_token_comes_with_the_agents_settings_file(logged_in_client, host, settings):
    settings.VIGIL_BASE_URL = "https://vigil.example.com"
    page = logged_in_client.post(f"/raid/hosts/{host.pk}/token").content.decode()
    token = page.split('<code class="secret">')[1].split("</code>")[0]
    assert f"VIGIL_URL=https://vigil.example.com\nVIGIL_TOKEN={token}\nVIGIL_HOST={host.pk}" in page


def test_the_host_page_serves_the_agent_with_vigils_url_and_the_host_filled_in(
    client, viewer, host, settings
):
    settings.VIGIL_BASE_URL = "https://vigil.example.com"
    client.force_login(viewer)
    page = client.get(f"/raid/hosts/{host.pk}/").content.decode()
    for name in ("vigil-raid-push", "vigil-raid-push.service", "vigil-raid-push.timer"):
        assert f'href="/raid/hosts/{host.pk}/agent/{name}"' in page
    script = client.get(f"/raid/hosts/{host.pk}/agent/vigil-raid-push").content.decode()
    assert "VIGIL_URL=${VIGIL_URL:-https://vigil.example.com}\n" in script
    assert f"VIGIL_HOST=${{VIGIL_HOST:-{host.pk}}}\n" in script
    cron = client.get(f"/raid/hosts/{host.pk}/agent/vigil-raid-push.cron")
    assert cron.content == b"* * * * * root /usr/local/sbin/vigil-raid-push\n"
    assert client.get(f"/raid/hosts/{host.pk}/agent/vigil-galera-push").status_code == 404
    assert client.get("/raid/hosts/999999/agent/vigil-raid-push").status_code == 404


def test_the_30_second_poll_reads_neither_the_changes_nor_the_gone_arrays(logged_in_client, host):
    """The live part is the host's status, arrays and disks: its recent changes and the arrays
    gone from /proc/mdstat are the whole page's, as other concerns' polls leave their history."""
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=["sdb"]))  # transitions
    Array.objects.filter(host=host, name="md5").update(present=False)  # one gone array
    url = f"/raid/hosts/{host.pk}/"
    with CaptureQueriesContext(connection) as whole:
        page = logged_in_client.get(url).content.decode()
    with CaptureQueriesContext(connection) as live:
        text = logged_in_client.get(url, headers={"HX-Request": "true"}).content.decode()

    def reads(captured: CaptureQueriesContext, *words: str) -> bool:
        return any(all(w in q["sql"] for w in words) for q in captured.captured_queries)

    assert reads(whole, "alerts_transition") and reads(whole, "COUNT(", "raid_array")
    assert not reads(live, "alerts_transition") and not reads(live, "COUNT(", "raid_array")
    assert len(live.captured_queries) < len(whole.captured_queries)
    assert 'id="gone"' in page and "Recent changes" in page
    assert 'id="gone"' not in text and "Recent changes" not in text and "badge-critical" in text
