"""Hosts: push tokens stored hashed and replaced, validation of the admin's input."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.raid.models import Host

pytestmark = pytest.mark.django_db


def test_a_token_is_stored_hashed_and_found_by_its_lookup(host):
    raw = host.issue_token()
    host.refresh_from_db()
    assert raw.startswith("vgh_") and len(raw) > 40
    assert raw not in (host.token_hash, host.token_lookup)
    assert host.token_hint == f"vgh_{raw[4:12]}…"
    assert host.token_matches(raw)
    assert not host.token_matches(raw[:-1] + ("A" if raw[-1] != "A" else "B"))


def test_a_new_token_replaces_the_old_one(host):
    old = host.issue_token()
    new = host.issue_token()
    host.refresh_from_db()
    assert host.token_matches(new) and not host.token_matches(old)


def test_a_host_without_a_token_matches_nothing(host):
    assert not host.token_matches("vgh_anything")


def test_it_validates_domain_rules_and_ssh_addresses(host):
    host.domain_rules = ["sdb"]
    with pytest.raises(ValidationError, match="JSON object"):
        host.full_clean()
    host.domain_rules = {" sd[b-f] ": " storage-a "}
    host.full_clean()
    assert host.domain_rules == {"sd[b-f]": "storage-a"}
    host.collection = Host.Collection.SSH
    with pytest.raises(ValidationError, match="needs an address"):
        host.full_clean()


def test_a_host_name_must_fit_in_a_url(host):
    host.name = "bad name/with slash"
    with pytest.raises(ValidationError):
        host.full_clean()


def test_a_host_without_arrays_is_unknown(host):
    assert host.status == "unknown"
