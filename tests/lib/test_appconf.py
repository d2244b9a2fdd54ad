"""One settings mechanism (apps/lib/appconf.py): each rule written once, the known names and
docs/configuration.md derived from the declarations."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from apps.lib import appconf
from apps.lib import conf as core_conf
from apps.lib.appconf import Setting
from tests.helpers import ROOT

DECLARED = appconf.vigils(settings.INSTALLED_APPS)
EVERY = [s for d in DECLARED for s in d.settings]


def test_the_committed_configuration_reference_is_the_generated_one():
    committed = (ROOT / appconf.REFERENCE_FILE).read_text()
    assert committed == appconf.reference(DECLARED), (
        f"{appconf.REFERENCE_FILE} differs from the settings declarations: regenerate it with "
        f"`{appconf.REFERENCE_COMMAND}`"
    )


def test_the_command_prints_the_reference(capsys):
    call_command("settings_reference")
    assert capsys.readouterr().out == appconf.reference(DECLARED)


def test_the_reference_lists_every_app_that_declares_settings():
    apps = [d.app for d in DECLARED]
    assert apps[0] == "core"
    assert {"apps.accounts", "apps.efs", "apps.ebs", "apps.galera", "apps.probes", "apps.raid"} <= (
        set(apps)
    )
    assert "tests.concern_app" not in apps  # installed by the test settings, not Vigil's


def test_every_variable_is_declared_once_and_described():
    names = [s.name for s in EVERY]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert [s.name for s in EVERY if not s.help.strip()] == []


def test_the_known_variables_are_the_declared_ones():
    declared = appconf.known_names(appconf.declared(settings.INSTALLED_APPS))
    assert declared == settings.KNOWN_VIGIL_VARIABLES
    assert "VIGIL_GADGETS_CRITICAL_PERCENT" in declared  # the tests' concern, installed
    assert {"VIGIL_WEB_BIND", "VIGIL_ADMIN_PASSWORD"} <= declared  # read outside the settings


def test_every_declared_variable_is_in_env_example():
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert {s.name for s in EVERY} - documented == set()


def test_an_unknown_vigil_variable_stops_the_start():
    appconf.check_unknown_variables({"VIGIL_A"}, {"VIGIL_A_FILE": "/x", "OTHER": "1"})
    with pytest.raises(ImproperlyConfigured, match="Unknown setting VIGIL_B, VIGIL_C"):
        appconf.check_unknown_variables({"VIGIL_A"}, {"VIGIL_C": "1", "VIGIL_B": "2"})


def read(setting: Setting, monkeypatch, value: str | None) -> object:
    if value is None:
        monkeypatch.delenv(setting.name, raising=False)
    else:
        monkeypatch.setenv(setting.name, value)
    return setting.read()


def test_auto_true_false(monkeypatch):
    demo = core_conf.BY_NAME["VIGIL_DEMO"]
    assert read(demo, monkeypatch, None) == "auto"
    assert read(demo, monkeypatch, "TRUE") == "true"
    assert demo.read(production=True) == "true"  # set: the production default does not apply
    monkeypatch.delenv("VIGIL_DEMO")
    assert demo.read(production=True) == "false"
    loopback = core_conf.BY_NAME["VIGIL_OUTBOUND_ALLOW_LOOPBACK"]
    assert [read(loopback, monkeypatch, v) for v in ("auto", "True", "false")] == [
        "auto",
        True,
        False,
    ]
    for setting in (demo, loopback):
        with pytest.raises(ImproperlyConfigured) as error:
            read(setting, monkeypatch, "maybe")
        assert (
            str(error.value) == f"Invalid value for {setting.name}: 'maybe' (auto, true or false)"
        )


def test_a_list_of_networks(monkeypatch):
    allow = core_conf.BY_NAME["VIGIL_METRICS_ALLOW"]
    assert read(allow, monkeypatch, "10.0.0.0/8, 192.0.2.7,2001:db8::/32") == [
        "10.0.0.0/8",
        " 192.0.2.7",
        "2001:db8::/32",
    ]
    with pytest.raises(ImproperlyConfigured, match="VIGIL_METRICS_ALLOW: 'nope' does not appear"):
        read(allow, monkeypatch, "10.0.0.0/8,nope")


def test_a_rate(monkeypatch):
    push = next(s for s in EVERY if s.name == "VIGIL_EFS_CLIENT_PUSH_RATE")
    assert read(push, monkeypatch, "10/s") == "10/s"
    assert read(push, monkeypatch, "None") is None
    with pytest.raises(ImproperlyConfigured, match=r"'lots', expected e.g. 1200/min, or none"):
        read(push, monkeypatch, "lots")


def test_numbers_in_a_range():
    assert appconf.at_least(1)(1) == 1
    with pytest.raises(ValueError, match="^at least 1$"):
        appconf.at_least(1)(0)
    share = appconf.within(0, 1, "above 0, below 1", above=True)
    assert share(0.5) == 0.5
    for wrong in (0, 1):
        with pytest.raises(ValueError, match="above 0, below 1"):
            share(wrong)
    assert appconf.within(0, 10, "0 to 10")(0) == 0
    assert appconf.price(10_000)(" ") is None
    assert appconf.price(10_000)("6.5") == 6.5
    with pytest.raises(ValueError, match="^0 to 10,000$"):
        appconf.price(10_000)("10000")


def test_a_computed_default_follows_what_it_is_computed_from(monkeypatch):
    monkeypatch.setenv("VIGIL_WEB_PORT", "9000")
    monkeypatch.delenv("VIGIL_BASE_URL", raising=False)
    values = appconf.read(core_conf.SETTINGS)
    assert values["VIGIL_BASE_URL"] == "http://127.0.0.1:9000"
    assert "VIGIL_ADMIN_PASSWORD" not in values  # read by ensure_admin when it runs
