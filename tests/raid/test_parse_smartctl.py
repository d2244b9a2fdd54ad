"""smartctl --json -a outputs, real and published (tests/fixtures/smartctl), and hostile ones."""

from __future__ import annotations

import dataclasses
import json

import pytest

from apps.raid import bounds
from apps.raid.disks import DiskThresholds, judge
from apps.raid.parse_smartctl import MAX_BYTES, SmartUnreadable, parse
from tests.helpers import SHARED_FIXTURES

SAMPLES = sorted((SHARED_FIXTURES / "smartctl").glob("*.expected.json"))


def expected(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    "sample", SAMPLES, ids=[p.name.removesuffix(".expected.json") for p in SAMPLES]
)
def test_it_reads_each_published_output_into_its_facts_and_health(sample):
    facts = expected(sample)
    reading = parse((sample.parent / facts["sample_file"]).read_text())
    got = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(reading).items()
    }
    assert got == facts["expected"]
    health = judge(reading, DiskThresholds())
    assert (health.status.value, health.failing, health.summary) == (
        facts["health"]["status"],
        facts["health"]["failing"],
        facts["health"]["summary"],
    )


def test_the_fixtures_cover_sata_sas_nvme_a_failing_disk_and_hidden_smart():
    kinds = {expected(p)["notes"][0] for p in SAMPLES}
    assert {
        "SATA, healthy",
        "SAS, healthy",
        "NVMe, healthy",
        "a failing disk",
        "a USB bridge that hides SMART",
        "a virtual disk without SMART",
    } <= kinds
    for path in SAMPLES:
        provenance = expected(path)["provenance"]
        assert provenance["repo"] and provenance["path"] and len(provenance["commit"]) == 40


def test_a_device_smart_cannot_read_is_never_healthy():
    for name in ("smartmontools-go-usb-bridge-unknown", "scrutiny-intel-raid-volume-no-smart"):
        reading = parse((SHARED_FIXTURES / "smartctl" / f"{name}.json").read_text())
        assert not reading.has_health
        assert judge(reading, DiskThresholds()).status.value == "unknown"


def test_thresholds_are_data_a_rule_at_zero_is_off():
    text = SHARED_FIXTURES / "smartctl" / "smartctl-exporter-sas-seagate-grown-defects.json"
    reading = parse(text.read_text())
    assert judge(reading, DiskThresholds(grown_defects=300, uncorrected_errors=0)).summary == (
        "SMART passed"
    )
    assert judge(reading, DiskThresholds(grown_defects=260)).failing


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "smartctl printed nothing"),
        ("=======> UNRECOGNIZED OPTION: json\n", "not JSON: smartctl older than 7.0"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ('{"smartctl": {"exit_status": NaN}}', "not JSON"),
        ('{"json_format_version": [1, 0]}', "no 'smartctl' object"),
        ("[1, 2]", "no 'smartctl' object"),
        (" " * (MAX_BYTES + 1), "more than 256 KiB"),
    ],
    ids=["empty", "smartctl-6", "deep", "nan", "no-smartctl", "a-list", "too-large"],
)
def test_what_is_not_smartctls_json_is_unreadable_with_the_reason(text, why):
    with pytest.raises(SmartUnreadable, match=why.replace("(", r"\(")):
        parse(text)


def test_values_the_database_cannot_keep_are_left_out_not_believed():
    text = json.dumps(
        {
            "smartctl": {"exit_status": -1, "version": [7, "x"]},
            "model_name": "bad\u0000model",
            "serial_number": "x" * 500,
            "smart_status": {"passed": "yes"},
            "ata_smart_attributes": {
                "table": [
                    {"id": 197, "raw": {"value": 2**64}},
                    {"id": 5, "raw": {"value": True}},
                    "not a row",
                    {"id": 198, "raw": {"value": 3}, "when_failed": "now", "name": "\ud800"},
                ]
            },
            "temperature": {"current": 0},
            "wwn": {"naa": 99, "oui": 1, "id": 1},
        }
    )
    reading = parse(text)
    assert (reading.model, len(reading.serial), reading.passed) == ("", 100, None)
    assert (reading.pending_sectors, reading.reallocated_sectors) == (None, None)
    assert reading.offline_uncorrectable == 3 and reading.failing_attributes == ()
    assert (reading.exit_status, reading.version, reading.temperature_c, reading.wwn) == (
        None,
        (7,),
        None,
        "",
    )
    assert all(bounds.unstorable(v) is None for v in (reading.model, reading.serial))
