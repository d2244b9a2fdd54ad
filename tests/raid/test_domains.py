"""Failure-domain rules: shell-style patterns, the longest wins, partitions follow their disk."""

from __future__ import annotations

import pytest

from apps.raid.demo import SEED_DOMAINS, SEED_RULES
from apps.raid.domains import domain_map, validate_rules


def test_the_seed_rules_map_every_seed_disk_to_its_server():
    assert domain_map(SEED_DOMAINS, SEED_RULES) == SEED_DOMAINS


def test_the_longest_matching_pattern_wins_whatever_the_key_order():
    rules = {"sd*": "shelf", "sdb": "storage-a", "sd[b-c]*": "enclosure"}
    devices = ["sdb", "sdc1", "sdz", "nvme0n1"]
    expected = {"sdb": "storage-a", "sdc1": "enclosure", "sdz": "shelf"}
    assert domain_map(devices, rules) == expected
    assert domain_map(devices, dict(reversed(rules.items()))) == expected


def test_a_partition_matches_its_disks_pattern():
    assert domain_map(["sdb1", "nvme0n1p2", "dm-3"], {"sd[b-f]": "a", "nvme0n1": "b"}) == {
        "sdb1": "a",
        "nvme0n1p2": "b",
    }


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (["sdb"], "JSON object"),
        ({"": "a"}, "non-empty"),
        ({"sdb": ""}, "non-empty"),
        ({"sdb": 3}, "non-empty"),
        ({"x" * 201: "a"}, "at most 200"),
    ],
)
def test_it_refuses_rules_that_are_not_a_mapping_of_texts(value, words):
    with pytest.raises(ValueError, match=words):
        validate_rules(value)


def test_empty_rules_are_no_rules():
    assert validate_rules(None) == validate_rules("") == validate_rules({}) == {}
