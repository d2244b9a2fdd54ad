"""The documentation: the short README's links resolve, every page the site's nav names exists,
what the long README told is still told somewhere in docs/, and the site builds with MkDocs'
``--strict`` (a broken link or anchor, or a page left out of the nav, fails it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"

#: Every section of the README before it became the short one (issue 33), and the page it moved
#: to with the heading it keeps there ("#" alone: it is the page itself).
MOVED = {
    "Start it": "getting-started.md#",
    "Test it": "testing.md#",
    "At fleet scale": "benchmarks.md#",
    "Configure it": "configuration.md#",
    "History and retention": "retention.md#",
    "EFS": "efs.md#",
    "EFS: documented figures": "efs.md#efs-documented-figures",
    "Which client? (NFS clients' own counters)": "efs.md#which-client-nfs-clients-own-counters",
    "EBS": "ebs.md#",
    "HTTP keep-alive probes": "probes.md#",
    "md-RAID": "raid.md#",
    "Galera": "galera.md#",
    "Alerts": "alerts.md#",
    "Channels": "alerts.md#channels",
    "When a channel fails": "alerts.md#when-a-channel-fails",
    "API": "api.md#",
    "Prometheus and Grafana": "api.md#prometheus-and-grafana",
    "Sign-in": "sign-in.md#sign-in",
    "Roles and audit": "sign-in.md#roles-and-audit",
    "Outbound guard": "security.md#outbound-guard",
    "Security": "security.md#",
    "Run it in production": "production.md#",
    "Scaling out": "production.md#scaling-out",
    "How it is built": "design.md#",
    "Choices that are not obvious": "design.md#choices-that-are-not-obvious",
}

#: A few facts of each section, as the long README wrote them: a page that loses one fails here.
FACTS = {
    "getting-started.md": ["VIGIL_ADMIN_PASSWORD", "VIGIL_TRIALS_AT_ONCE", "Sent messages"],
    "testing.md": ["EXCLUSIVE_FIXTURES", "tests/test_first_hour.py", "-m faults"],
    "benchmarks.md": ["seed_fleet --filesystems 1000", "bench/load.sh", "bench/hostile.py"],
    "configuration.md": ["NAME_FILE", ".env.example"],
    "retention.md": ["VIGIL_HISTORY_EXPIRY_BATCH", "apps/lib/partitions.py"],
    "efs.md": ["VIGIL_EFS_SETTLE_MINUTES", "vigil-nfs-push", "The lock trap", "efs-clients.png"],
    "ebs.md": ["VolumeStalledIOCheck", "VIGIL_EBS_ADVICE_DAYS", "bench/ebs_collect.py"],
    "probes.md": ["probe_keepalive", "VIGIL_PROBES_CONCURRENCY"],
    "raid.md": ["smartctl --json=c", "VIGIL_PUSH_MAX_BYTES", "raid-disks.png"],
    "galera.md": ["galera_new_cluster", "vigil-galera-push", "galera-recovery.png"],
    "alerts.md": ["VIGIL_ALERT_SWEEP_SECONDS", "dedup_key", "alerts-cause.png"],
    "api.md": ["VIGIL_API_RATE_READ", "If-None-Match", "VIGIL_METRICS_CACHE_SECONDS"],
    "sign-in.md": ["VIGIL_SIGNIN_ADMIN_GROUPS", "django-auth-ldap", "ensure_admin"],
    "security.md": ["VIGIL_OUTBOUND_ALLOW_LOOPBACK", "VIGIL_LOGIN_FAILURE_LIMIT"],
    "production.md": [
        *("docker compose up -d", "VIGIL_REGION_QUEUES", "tests/test_compose.py"),
        "Statuses that change after upgrading",  # issue 24's note of what users will see
    ],
    "design.md": ["EmbeddedService", "django-allauth", "apps/lib/bodies.py"],
    "index.md": ["home.png", "region.png"],
}

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor MkDocs' toc gives a heading (Python-Markdown's default slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    fenced, found = False, set()
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            found.add(slug(match.group(1)))
    return found


def nav_pages() -> list[str]:
    def walk(entries):
        for entry in entries:
            for value in entry.values() if isinstance(entry, dict) else [entry]:
                yield from walk(value) if isinstance(value, list) else [value]

    # mkdocs.yml holds no !!python tags, so the safe loader reads it.
    return list(walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))


def test_every_page_of_the_nav_exists_and_every_page_is_in_it():
    pages = nav_pages()
    assert [page for page in pages if not (DOCS / page).is_file()] == []
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(pages)


def test_the_readme_links_resolve():
    links = [link for link in LINK.findall(README.read_text()) if "://" not in link]
    assert "docs/region.png" in links and "docs/getting-started.md" in links
    for link in links:
        path, _, anchor = link.partition("#")
        target = (README.parent / path) if path else README
        assert target.is_file(), f"README.md links {link}: no such file"
        if anchor:
            assert anchor in anchors(target), f"README.md links {link}: no such heading"


def test_the_readme_fits_on_two_screens_and_keeps_its_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 120
    # .ci/run runs the README's test command; make run is how it starts.
    assert "```sh\nmake run\n```" in text and "```sh\nmake test\n```" in text
    assert "docs/region.png" in text and "make docs" in text


@pytest.mark.parametrize("title", sorted(MOVED))
def test_each_section_of_the_long_readme_is_a_page_or_a_heading_of_one(title):
    page, _, anchor = MOVED[title].partition("#")
    assert page in nav_pages()
    if anchor:
        assert anchor in anchors(DOCS / page), f"{page} has no heading {title!r}"


@pytest.mark.parametrize("page", sorted(FACTS))
def test_each_page_still_tells_what_the_readme_told(page):
    text = (DOCS / page).read_text()
    assert [fact for fact in FACTS[page] if fact not in text] == []


def test_every_image_in_docs_is_shown_on_a_page():
    text = "".join(page.read_text() for page in DOCS.glob("*.md"))
    assert [p.name for p in DOCS.glob("*.png") if f"]({p.name})" not in text] == []


def test_the_design_document_says_where_the_documentation_lives():
    assert "mkdocs.yml" in (DOCS / "architecture.md").read_text()


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """What ``make docs`` runs: broken links and anchors are warnings in mkdocs.yml's
    ``validation``, and ``--strict`` makes any warning fail the build."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "efs.html").is_file() and (tmp_path / "efs-clients.png").is_file()
    assert "WARNING" not in result.stderr


@pytest.mark.slow
def test_a_broken_anchor_fails_the_strict_build(tmp_path):
    """The validation settings are what make a broken anchor fail: checked in this process on a
    copy of the config with one page and MkDocs' plain theme, which builds until the anchor
    breaks."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "index.md"
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(nav=["index.md"], theme={"name": "mkdocs"}, plugins=[], docs_dir="docs")
    config.update(site_dir=str(tmp_path / "site"))
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    page.write_text("# Home\n\n[here](#home)\n")
    build(load_config(str(tmp_path / "mkdocs.yml")))
    page.write_text("# Home\n\n[nowhere](#no-such-heading)\n")
    with pytest.raises(Abort, match="1 warnings"):
        build(load_config(str(tmp_path / "mkdocs.yml")))
