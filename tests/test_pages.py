"""Every page in Debian's chromium, at desktop and phone width, light and dark: no sideways
scroll, and axe-core finds no serious or critical accessibility violation.

One browser for the session (tests/plugins/browser.py), one live server, the pages visited in a loop.
Screenshots go to test-output/pages/<page>-<width>-<scheme>.png, axe's findings (all impacts)
to test-output/axe.json, and the region pane of the demo region to test-output/readme/region.png
(docs/region.png, shown in README.md and docs/index.md, is a copy of it).
"""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest

from tests.helpers import OUTPUT_DIR, demo_account_on_standin, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}
SCHEMES = ("light", "dark")
BLOCKING = ("serious", "critical")


def _story(region, subjects: dict[str, object]) -> None:
    """Status changes of the last hours, so that the timeline shows problems lining up: the
    array resyncing at -62 min, the file system at its I/O limit at -58, the API's probe
    mismatched at -57 (written as transitions, as ``alerts.record`` writes them)."""
    from django.contrib.contenttypes.models import ContentType
    from django.utils import timezone

    from apps.alerts.models import Transition

    now = timezone.now()
    story = [
        ("raid", 62, "ok", "warning", "md2: recovery 12% (storage-b's sdh re-added)"),
        ("efs", 58, "ok", "critical", "PercentIOLimit 100% for 5 min"),
        ("efs", 31, "critical", "warning", "PercentIOLimit 93%"),
        ("probes", 57, "ok", "warning", "closes idle connections after 15 s, expected 60-75 s"),
        ("galera", 56, "ok", "warning", "flow control paused 0.4 of the last minute"),
        ("galera", 40, "warning", "ok", "Primary, 4 data nodes Synced"),
    ]
    for concern, minutes, old, new, reason in story:
        subject = subjects[concern]
        Transition.objects.create(
            content_type=ContentType.objects.get_for_model(subject),
            object_id=subject.pk,
            region=region,
            concern=concern,
            subject_label=str(subject)[:255],
            old_status=old,
            new_status=new,
            reason=reason,
            processed=now,
            created=now - timedelta(minutes=minutes),
        )


@pytest.fixture
def demo_story(settings, admin):
    """The demo as ``make run`` sets it up: the stand-in's regions, every concern's demo
    subjects, EFS collected in the demo region, the probes judged, an email sent."""
    from django.core import mail
    from django.utils import timezone

    from apps.alerts.models import Incident, SentMessage
    from apps.demo import mode
    from apps.ebs import tasks as ebs_tasks
    from apps.ebs.models import RegionCollection as EbsCollection
    from apps.ebs.models import Volume
    from apps.efs import tasks as efs_tasks
    from apps.efs.models import FileSystem, RegionCollection
    from apps.galera.models import Cluster
    from apps.probes import demo as probes_demo
    from apps.probes.collect import save_result
    from apps.probes.keepalive import Measurement
    from apps.probes.models import Target
    from apps.raid.models import Array, Host
    from apps.regions import demo
    from apps.regions.models import Region

    settings.VIGIL_DEMO = "true"
    mode.demo_enabled.cache_clear()
    with demo_account_on_standin(settings) as account:
        mode.set_up_demo_fleet()
        region = account.regions.get(code=demo.DEMO_REGION)
        collection, _ = RegionCollection.objects.get_or_create(region=region)
        efs_tasks.collect_region(collection.pk, region=region.code)
        volumes, _ = EbsCollection.objects.get_or_create(region=region)
        ebs_tasks.collect_region(volumes.pk, region=region.code)
    now = timezone.now()
    for behaviour in probes_demo.BEHAVIOURS:
        target = Target.objects.get(name=behaviour.name)
        save_result(
            target.spec(),
            Measurement(
                url=target.url,
                started_at=now,
                status_code=200,
                idle_timeout_s=behaviour.keepalive_s,
                closed_by="server",
            ),
        )
    subjects = {
        "efs": FileSystem.objects.filter(region=region, collected_until__isnull=False)
        .order_by("name")
        .first(),
        "galera": Cluster.objects.get(region=region),
        "raid": Array.objects.get(region=region, name="md2"),
        "probes": Target.objects.filter(region=region).order_by("name").first(),
    }
    _story(region, subjects)
    settings.EMAIL_BACKEND = "apps.alerts.mailbox.OneLineBackend"
    mail.EmailMultiAlternatives(
        "WARNING eu-west-1 Keep-alive Demo: API behind a load balancer: closes idle connections",
        "The API closes idle connections after 15 s; the load balancer expects 60-75 s.",
        "vigil@localhost",
        ["oncall@example.com"],
        alternatives=[("<h1>WARNING</h1><p>closes idle connections after 15 s</p>", "text/html")],
    ).send()
    host = Host.objects.get(is_demo=True)
    incident = Incident.objects.filter(closed=None).first()
    site = Region.objects.get(account=account, code=demo.OUTSIDE_SITE_CODE)
    pages = {
        "login": "/accounts/login/",
        "home": "/",
        "region": f"/regions/{region.pk}/",
        "region-7d": f"/regions/{region.pk}/?span=7d",
        "site": f"/regions/{site.pk}/",
        "filesystem": f"/efs/filesystems/{subjects['efs'].pk}/",
        "volume": f"/ebs/volumes/{Volume.objects.get(name='storage-b-lun1').pk}/",
        "cluster": f"/galera/clusters/{subjects['galera'].pk}/",
        "raid-host": f"/raid/hosts/{host.pk}/",
        "probe-target": f"/probes/targets/{subjects['probes'].pk}/",
        "probe-presets": "/probes/presets/",
        "alerts": "/alerts/",
        "history": f"/alerts/history/{incident.content_type_id}/{incident.object_id}/",
        "channels": "/alerts/channels/",
        "new-rule": "/alerts/rules/new/",
        "new-silence": "/alerts/silences/new/",
        "escalations": "/alerts/escalations/",
        "new-escalation": "/alerts/escalations/new/",
        "windows": "/alerts/windows/",
        "new-window": "/alerts/windows/new/",
        "dependencies": "/alerts/dependencies/",
        "new-dependency": "/alerts/dependencies/new/",
        "sent": f"/alerts/sent/?message={SentMessage.objects.get().pk}",
        "api-keys": "/accounts/keys/",
        "audit": "/accounts/audit/",
        "preferences": "/accounts/preferences/",
        "new-cluster": f"/galera/clusters/new/?region={region.pk}",
        "edit-cluster": f"/galera/clusters/{subjects['galera'].pk}/edit/",
        "new-node": f"/galera/clusters/{subjects['galera'].pk}/nodes/new/",
        "new-raid-host": f"/raid/hosts/new/?region={region.pk}",
        "edit-raid-host": f"/raid/hosts/{host.pk}/edit/",
        "new-probe": f"/probes/targets/new/?region={region.pk}",
        "edit-probe": f"/probes/targets/{subjects['probes'].pk}/edit/",
        "first-account": "/regions/first-account/",
    }
    mode.demo_enabled.cache_clear()
    return pages


def _log_in(page, base: str, then: str = "") -> None:
    """Logged in as admin, home shown; then at ``then``, once the network is idle."""
    log_in(page, base)
    page.wait_for_selector("#tiles")
    if then:
        page.goto(base + then, wait_until="networkidle")


def _axe(page, source: str) -> list[dict]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(source)  # through the devtools protocol: the page's CSP does not apply
    return page.evaluate(
        """async () => {
          const r = await axe.run(document, {resultTypes: ["violations"]});
          return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))}));
        }"""
    )


def test_every_page_at_desktop_and_phone_width_in_light_and_dark_is_axe_clean_without_sideways_scroll(
    live_server, demo_story, chromium, axe_source
):
    pages = demo_story
    findings: dict[str, list[dict]] = {}
    sideways: list[str] = []
    started = time.monotonic()
    for scheme in SCHEMES:
        context = chromium.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
        page = context.new_page()
        _log_in(page, live_server.url)
        for name, path in pages.items():
            if name == "login":
                continue
            for width_name, (width, height) in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": height})
                page.goto(live_server.url + path, wait_until="networkidle")
                page.wait_for_timeout(200)  # vigil.js marks scrolling tables after a resize
                key = f"{name}-{width_name}-{scheme}"
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                if overflow > 0:
                    sideways.append(f"{key}: {overflow}px")
                findings[key] = _axe(page, axe_source)
                screenshot(page, f"pages/{key}.png")
        context.close()
        # The login page, logged out.
        context = chromium.new_context(viewport={"width": 390, "height": 844}, color_scheme=scheme)
        page = context.new_page()
        page.goto(live_server.url + pages["login"])
        findings[f"login-phone-{scheme}"] = _axe(page, axe_source)
        screenshot(page, f"pages/login-phone-{scheme}.png")
        context.close()
    elapsed = time.monotonic() - started
    summary = {
        "pages": len(findings),
        "seconds": round(elapsed, 1),
        "by_impact": {},
        "violations": {k: v for k, v in findings.items() if v},
    }
    for violations in findings.values():
        for v in violations:
            summary["by_impact"][v["impact"]] = summary["by_impact"].get(v["impact"], 0) + 1
    (OUTPUT_DIR / "axe.json").write_text(json.dumps(summary, indent=2))
    blocking = {
        key: [
            f"{v['impact']} {v['id']}: {v['help']} {v['nodes']}"
            for v in found
            if v["impact"] in BLOCKING
        ]
        for key, found in findings.items()
    }
    assert {k: v for k, v in blocking.items() if v} == {}
    assert sideways == []


def test_the_region_pane_shows_every_concern_and_the_timeline(
    live_server, demo_story, browser_page
):
    page = browser_page
    _log_in(page, live_server.url, demo_story["region"])
    headings = page.locator("section.panel h2").all_inner_texts()
    assert {h.split()[0] for h in headings[1:]} == {"EFS", "md-RAID", "Keep-alive", "Galera", "EBS"}
    assert page.locator("#timeline .band").count() >= 4
    # Every concern holds something here (the tests' own Gadgets concern does not).
    empty = page.locator("#empty-concerns").inner_text()
    assert not any(label in empty for label in ("EFS", "md-RAID", "Keep-alive", "Galera", "EBS"))
    page.click("#timeline .timeline-spans a:text('7d')")
    page.wait_for_selector("#timeline h2:has-text('last 7d')")
    assert "span=7d" in page.url
    readme = OUTPUT_DIR / "readme"
    readme.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(live_server.url + demo_story["region"], wait_until="networkidle")
    # The tests' own Gadgets concern (tests/concern_app) is not part of Vigil: not in the docs.
    page.evaluate("document.getElementById('empty-concerns')?.remove()")
    page.locator("main").screenshot(path=readme / "region.png")


def test_each_chart_has_its_latest_values_in_words_and_its_data_as_csv(
    live_server, demo_story, browser_page
):
    page = browser_page
    _log_in(page, live_server.url, demo_story["filesystem"])
    alts = page.locator(".chart-alt").all_inner_texts()
    assert len(alts) == page.locator(".timeseries").count() >= 4
    assert all(text.startswith("Latest") for text in alts)
    link = page.locator(".chart-alt a").first.get_attribute("href")
    answer = page.request.get(live_server.url + demo_story["filesystem"] + link)
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.text().startswith("time_utc,")


def test_the_sent_messages_page_frames_the_emails_html(live_server, demo_story, browser_page):
    page = browser_page
    _log_in(page, live_server.url)
    answers = []
    page.on("response", lambda r: answers.append((r.url, r.status)))
    page.goto(live_server.url + demo_story["sent"], wait_until="networkidle")
    assert "closes idle connections after 15 s" in page.locator("pre.mail-text").inner_text()
    framed = page.frame_locator("iframe.mail-html").locator("h1")
    assert framed.inner_text(timeout=5000) == "WARNING", answers


def test_the_polled_home_page_keeps_its_tiles_title_and_icon(live_server, demo_story, browser_page):
    page = browser_page
    _log_in(page, live_server.url)
    before = page.title()
    # How many are critical depends on the demo's time of day (its scratch file system drains).
    assert re.match(r"\(\d+ critical\) Regions", before), before
    page.evaluate("document.title = 'stale'")
    page.evaluate(
        """() => new Promise(done => { document.body.addEventListener('htmx:afterSettle',
             () => done(), {once: true}); htmx.ajax('GET', '/', {target: '#tiles',
             swap: 'outerHTML'}); })"""
    )
    assert page.title() == before
    assert page.locator("#tiles .tile").count() >= 6
    assert page.locator("link#favicon").get_attribute("href").endswith("favicon-critical.svg")
    assert page.locator("body title, main link").count() == 0
