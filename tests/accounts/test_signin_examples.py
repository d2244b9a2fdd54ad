"""docs/sign-in.md's worked examples (a generic OpenID Connect provider, LDAP and Active
Directory) name only variables Vigil declares, each with a value its setting reads, so that a
reader who copies one into .env gets a start, not "Unknown setting"."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from apps.lib import appconf
from tests.helpers import ROOT

SETTINGS = {s.name: s for d in appconf.vigils(settings.INSTALLED_APPS) for s in d.settings}
BLOCK = re.compile(r"```sh\n(.*?)```", re.S)


def examples() -> list[dict[str, str]]:
    text = (ROOT / "docs" / "sign-in.md").read_text()
    found = []
    for block in BLOCK.findall(text):
        lines = (re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines())
        pairs = dict(line.split("=", 1) for line in lines if "=" in line)
        found.append({name: value.strip('"') for name, value in pairs.items()})
    return found


def test_the_page_has_the_two_worked_examples():
    names = [set(example) for example in examples()]
    assert any("VIGIL_OIDC_SERVER_URL" in n for n in names)
    assert any("VIGIL_LDAP_SERVER_URI" in n for n in names)


@pytest.mark.parametrize("example", examples(), ids=lambda e: next(iter(e)))
def test_each_example_names_declared_variables_with_values_they_read(
    example, monkeypatch, tmp_path
):
    appconf.check_unknown_variables(set(SETTINGS), example)  # NAME_FILE is NAME's secret file
    for name, value in example.items():
        if name not in SETTINGS:  # NAME_FILE: NAME's value read from a secret file
            assert name.removesuffix("_FILE") in SETTINGS, name
            continue
        if value.startswith("/"):  # a file of the reader's: one that exists here
            value = str(tmp_path / "file")
            (tmp_path / "file").write_text("-----BEGIN CERTIFICATE-----\n")
        monkeypatch.setenv(name, value)
        SETTINGS[name].read()  # ImproperlyConfigured names a value its setting refuses
