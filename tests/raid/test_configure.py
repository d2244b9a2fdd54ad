"""Adding and editing RAID hosts in the app, with "Test SSH" against a real sshd."""

from __future__ import annotations

import pytest

from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Host

pytestmark = pytest.mark.django_db


def form(site, **over: object) -> dict[str, object]:
    return {
        "name": "db-7",
        "region": site.pk,
        "collection": "push",
        "ssh_address": "",
        "ssh_port": 22,
        "ssh_user": "vigil",
        "known_hosts": "",
        "domain_rules": "{}",
        "domain_noun": "failure domain",
        "interval_s": 300,
        "enabled": "on",
        **over,
    }


def test_an_admin_adds_a_push_host_and_a_typo_is_said_while_typing(logged_in_client, site):
    page = logged_in_client.get(f"/raid/hosts/new/?region={site.pk}").content.decode()
    assert f'<option value="{site.pk}" selected>' in page
    live = logged_in_client.post(
        "/raid/hosts/new/",
        {**form(site, name="bad name!"), "_check": "1"},
        headers={"HX-Request": "true", "HX-Trigger-Name": "name"},
    )
    assert "Letters, digits, dots, dashes, underscores" in live.content.decode()
    assert not Host.objects.exists()
    saved = logged_in_client.post("/raid/hosts/new/", form(site))
    assert saved.status_code == 302 and saved["Location"] == f"/raid/hosts/{Host.objects.get().pk}/"


def try_ssh(client, site, sshd, known_hosts: str) -> str:
    """The new host form's "Test SSH" on ``sshd`` trusting ``known_hosts``: the page answered."""
    fields = form(
        site,
        collection="ssh",
        ssh_address="127.0.0.1",
        ssh_port=sshd.port,
        ssh_user=sshd.user,
        known_hosts=known_hosts,
    )
    return client.post("/raid/hosts/new/", {**fields, "_try": "1"}).content.decode()


def test_test_ssh_shows_what_it_read_and_saves_nothing(logged_in_client, site, sshd, settings):
    settings.VIGIL_RAID_SSH_KEY = sshd.client_key_text
    sshd.reply(seed_layout_mdstat(failed={"sdh"}))
    page = try_ssh(logged_in_client, site, sshd, known_hosts=sshd.known_hosts_line)
    assert "/proc/mdstat as read" in page and "md99 : active raid0" in page
    assert "md2" in page and "badge-warning" in page or "badge-critical" in page
    assert not Host.objects.exists()


def test_test_ssh_with_a_wrong_host_key_says_so(logged_in_client, site, sshd, settings):
    settings.VIGIL_RAID_SSH_KEY = sshd.client_key_text
    other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    page = try_ssh(logged_in_client, site, sshd, known_hosts=other)
    assert 'class="error"' in page.split('id="trial-h"', 1)[1]
    assert not Host.objects.exists()


def test_an_operator_may_not_add_a_host(client, operator, site):
    client.force_login(operator)
    assert client.get("/raid/hosts/new/").status_code == 403
    assert client.post("/raid/hosts/new/", form(site)).status_code == 403


def test_the_old_add_address_is_a_permanent_redirect_to_the_new(logged_in_client, site):
    """``/raid/new-host/`` was the add page before every concern's became ``<subjects>/new/``."""
    moved = logged_in_client.get(f"/raid/new-host/?region={site.pk}")
    assert moved.status_code == 301 and moved["Location"] == f"/raid/hosts/new/?region={site.pk}"
    assert logged_in_client.post("/raid/new-host/", form(site)).status_code == 405
