"""The one table of documented Galera facts (apps/galera/documented.py) is docs/galera.md's."""

from __future__ import annotations

from apps.galera import documented
from tests.helpers import ROOT

LABELS = {
    documented.CODERSHIP_STATUS: "Codership status variables",
    documented.CODERSHIP_MONITORING: "Codership monitoring",
    documented.CODERSHIP_PARAMETERS: "Codership parameters",
    documented.CODERSHIP_QUORUM: "Codership weighted quorum",
    documented.MARIADB_STATUS: "MariaDB status variables",
}


def link(url: str) -> str:
    label = LABELS.get(url) or "Galera 26.4.18 " + url.rsplit("/", 1)[-1]
    return f"[{label}]({url})"


def markdown() -> str:
    rows = [
        f"| `{fact.name}` | {fact.documented} | {fact.vigil} | "
        + ", ".join(link(url) for url in fact.sources)
        + " |"
        for fact in documented.FACTS
    ]
    header = "| Variable or option | What the sources say | What Vigil does | Sources |\n"
    return header + "|---|---|---|---|\n" + "\n".join(rows) + "\n"


def galera_page() -> str:
    return (ROOT / "docs" / "galera.md").read_text()


def test_the_galera_page_shows_the_table_of_documented_facts_as_the_code_keeps_it():
    section = galera_page()
    assert markdown() in section, "docs/galera.md should hold:\n" + markdown()
    assert f"read on {documented.READ_ON}" in section


def test_every_fact_names_its_sources():
    for fact in documented.FACTS:
        assert fact.sources and all(url.startswith("https://") for url in fact.sources)
    assert len({fact.name for fact in documented.FACTS}) == len(documented.FACTS)
