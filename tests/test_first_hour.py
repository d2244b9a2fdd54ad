"""The first hour with Vigil, walked as a new ops user walks it, in Debian's chromium: ``make
run`` started from a script (in the background, SIGINT ignored) on a fresh demo, log in, a
webhook channel and its test, a routing rule from the form, a new probe target that fails, the
rule's alert reaching a loopback webhook receiver, a silence of that one subject, an API key
and a request with it, a viewer told why they may not add a target, the home page on a phone in
dark mode, the stop (every process gone) and a restart that changes no configuration, and no
"RECOVERED" among the emails of something that never failed."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import signal
import sqlite3
import urllib.error
import urllib.request

import pytest

from tests.helpers import OUTPUT_DIR, log_in, screenshot
from tests.services import free_port, wait_for
from tests.services.make_run import MakeRun
from tests.services.receiver import Receiver

pytestmark = pytest.mark.browser

ADMIN_PASSWORD = "first-hour-admin"
SECRET = "a-webhook-secret-of-the-test-0123456789"
ALERT_LINE = re.compile(r"^(RECOVERED|WARNING|CRITICAL|UNKNOWN) · (.+)$")


@pytest.fixture
def vigil(tmp_path, migrated_sqlite):
    run = MakeRun(
        tmp_path / "var",
        demo=True,
        sigint_ignored=True,  # as `make run &` in a script starts it
        database=migrated_sqlite,
        VIGIL_ADMIN_PASSWORD=ADMIN_PASSWORD,
        VIGIL_DISPATCH_SECONDS="5",  # a new target is probed within seconds, not a minute
    )
    try:
        yield run.start()
    finally:
        run.kill()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def webhook_events(receiver: Receiver) -> list[dict]:
    return [event for request in receiver.requests for event in request.json["events"]]


def api_get(url: str, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def recovered_without_an_alert(messages: list[str]) -> list[str]:
    """Each "RECOVERED" item of the emails (in the order sent) whose subject no earlier email
    had alerted about."""
    alerted: set[str] = set()
    wrong = []
    for text in messages:
        for line in text.splitlines():
            if match := ALERT_LINE.match(line.strip()):
                word, subject = match.groups()
                if word != "RECOVERED":
                    alerted.add(subject)
                elif subject not in alerted:
                    wrong.append(line.strip())
    return wrong


def test_the_first_hour_of_a_new_user(vigil, receiver, browser_page):
    page, base = browser_page, vigil.url
    page.set_default_timeout(60_000)
    log_in(page, base, password=ADMIN_PASSWORD)
    page.wait_for_selector("#tiles .tile")
    screenshot(page, "first-hour/home-at-start.png")

    # A webhook channel, and its test message.
    page.goto(f"{base}/alerts/channels/")
    page.fill("#id_name", "Ops webhook")
    page.select_option("#id_kind", label="Webhook")
    page.fill("#id_target", f"{receiver.url}/vigil")
    page.fill("#id_secret", SECRET)
    page.click("button:text('Add channel')")
    page.click("a:text('Ops webhook')")
    page.click("button:text('Send a test')")
    assert "The test message was delivered." in page.locator("main").inner_text()
    (test_event,) = webhook_events(receiver)
    assert test_event["kind"] == "test"
    body = receiver.requests[0].body
    signed = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert receiver.requests[0].headers["X-Vigil-Signature"] == f"sha256={signed}"

    # A rule from the form: the concern is chosen by the label the pages use.
    page.goto(f"{base}/alerts/rules/new/")
    concerns = page.locator("#id_concern option").all_inner_texts()
    assert concerns[0] == "Any concern" and "Keep-alive" in concerns and "probes" not in concerns
    page.fill("#id_name", "Keep-alive in Ireland to the webhook")
    page.select_option("#id_region", label="eu-west-1 (Demo account)")
    page.select_option("#id_concern", label="Keep-alive")

    def subjects_offered() -> list[str]:
        return page.locator("#id_subject option").all_inner_texts()

    # The subject list follows the concern and region chosen, and a search narrows it.
    wait_for(lambda: not any("md-RAID" in o for o in subjects_offered()), 30, "the list to follow")
    page.fill("#id_subject_search", "front")
    wait_for(lambda: len(subjects_offered()) == 2, 30, "the search to narrow the list")
    assert subjects_offered()[1] == "Keep-alive Demo: web front end (nginx-like, 5 s) (eu-west-1)"
    page.fill("#id_subject_search", "")
    page.check("label:text('Ops webhook (Webhook)')")
    screenshot(page, "first-hour/rule-form.png")
    page.click("button:text('Save')")
    page.wait_for_url(f"{base}/alerts/channels/")
    rule = page.locator("tr", has_text="Keep-alive in Ireland to the webhook").inner_text()
    assert "Keep-alive" in rule and "Ops webhook" in rule
    screenshot(page, "first-hour/channels-and-rules.png")

    # The home page once the first collections are in: each concern's worst subject and why.
    page.set_viewport_size({"width": 1280, "height": 900})

    def first_collections_done() -> bool:
        page.goto(f"{base}/")
        tiles = page.inner_text("#tiles")
        return "first collection running" not in tiles and "for the first time" not in tiles

    wait_for(first_collections_done, 240, "the first collection of every subject", interval=5)
    # by its heading: another region's tile may name eu-west-1 too (a replica's reason)
    heading = page.get_by_role("heading", name="Europe (Ireland)", exact=True)
    ireland = page.locator(".tile", has=heading).inner_text()
    assert "demo-storage-client:md2: " in ireland  # md-RAID's worst, and why
    # docs/home.png is a copy of this: the demo a new user gets.
    (OUTPUT_DIR / "readme").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUTPUT_DIR / "readme" / "home.png"))

    # A probe target whose server is down: measured once, then saved.
    page.goto(f"{base}/probes/targets/new/")
    closed = free_port()
    page.fill("#id_name", "Shop front")
    page.fill("#id_url", f"http://127.0.0.1:{closed}/")
    page.select_option("#id_region", label="eu-west-1 (Demo account)")
    page.fill("#id_interval_s", "60")
    page.click("button:text('Measure once')")
    page.wait_for_selector("text=Measured once")
    assert "refused" in page.locator("main").inner_text().lower()
    page.click("button:text('Save')")
    page.wait_for_selector("h1:text('Shop front')")
    screenshot(page, "first-hour/new-target.png")
    target_url = page.url

    # Its alert reaches the webhook through the rule.
    def shop_front_alert() -> dict | None:
        return next(
            (e for e in webhook_events(receiver) if e["subject"]["label"] == "Shop front"), None
        )

    alert = wait_for(shop_front_alert, 180, "the new target's alert at the webhook")
    assert alert["word"] == "CRITICAL" and alert["subject"]["concern_label"] == "Keep-alive"
    assert alert["subject"]["url"].endswith(target_url.removeprefix(base))

    # A silence of that one subject, from its history page: the form names it.
    page.goto(target_url)
    page.click("a:text('Status changes and alerts')")
    page.click("a:text('Silence this subject')")
    heading = page.locator("h1").inner_text()
    assert heading == "Silence Keep-alive Shop front (eu-west-1)"
    assert page.locator("#id_region").count() == 0 and page.locator("#id_concern").count() == 0
    page.fill("#id_comment", "switch replaced")
    screenshot(page, "first-hour/silence-form.png")
    page.click("button:text('Save silence')")
    page.wait_for_url(f"{base}/alerts/")
    silences = page.locator("table", has_text="switch replaced").first
    assert "Keep-alive Shop front (eu-west-1)" in silences.inner_text()
    silences.locator("button:text('End now')").click()
    page.wait_for_selector("h2:text('Silences that ended')")
    ended = page.locator("table", has_text="switch replaced").first.inner_text()
    assert "Keep-alive Shop front (eu-west-1)" in ended

    # An API key, and a script's requests with it.
    page.click("nav[aria-label=Main] a:text('API keys')")
    page.fill("#id_name", "curl")
    page.click("button:text('Create key')")
    key = page.locator("#new-key").inner_text()
    status, answer = api_get(f"{base}/api/probes/targets/?region=eu-west-1", key)
    assert status == 200 and "Shop front" in [t["name"] for t in answer["results"]]
    assert api_get(f"{base}/api/probes/targets/?region=eu-west-9", key)[0] == 400
    assert api_get(f"{base}/api/probes/targets/?ordering=nope", key)[0] == 400
    assert api_get(f"{base}/api/no-such-thing/", key)[1]["error"].startswith("Not found")

    # A viewer is told why, in the app's page.
    page.goto(f"{base}/admin/auth/user/add/")
    page.fill("#id_username", "viewer")
    page.fill("#id_password1", "a-viewer-password-25")
    page.fill("#id_password2", "a-viewer-password-25")
    page.click("input[name=_save]")
    page.wait_for_selector("text=was added successfully")
    page.click("button:text('Log out')")
    log_in(page, base, username="viewer", password="a-viewer-password-25")
    page.wait_for_selector("#tiles .tile")
    page.goto(f"{base}/probes/targets/new/")
    refusal = page.locator("main").inner_text()
    assert "Your role (viewer) may not do this: it needs probes.add_target." in refusal
    assert page.locator("nav[aria-label=Main] a:text('Alerts')").count() == 1
    screenshot(page, "first-hour/viewer-refused.png")

    # Dark mode on a phone: nothing scrolls sideways.
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "first-hour/home-phone-dark.png")

    # The stop, as the script that started it sends it: every process gone.
    assert len(vigil.processes()) == 2
    vigil.signal(signal.SIGINT)
    assert vigil.wait_stopped() == 0

    # Start again, and stop as a service manager does: the restart changed no configuration.
    database = vigil.var_dir / "vigil.sqlite3"
    audit = "SELECT count(*) FROM auditlog_logentry"
    with sqlite3.connect(database) as db:
        (entries,) = db.execute(audit).fetchone()
    vigil.start()
    wait_for(lambda: len(vigil.processes()) == 2, 60, "the worker to start again")
    vigil.signal(signal.SIGTERM)
    assert vigil.wait_stopped() == 0
    with sqlite3.connect(database) as db:
        assert db.execute(audit).fetchone() == (entries,)
        # The first hour's emails: nothing "RECOVERED" that never failed.
        sent = [text for (text,) in db.execute("SELECT text FROM alerts_sentmessage ORDER BY id")]
    assert any("CRITICAL · eu-west-1 · md-RAID" in text for text in sent)
    assert recovered_without_an_alert(sent) == []


def test_it_finds_a_recovery_of_something_never_alerted():
    sent = [
        "CRITICAL · eu-west-1 · md-RAID demo:md2\nmd2: degraded\n",
        "RECOVERED · eu-west-1 · md-RAID demo:md2\nclean\nRECOVERED · lab · Galera prod\nok\n",
    ]
    assert recovered_without_an_alert(sent) == ["RECOVERED · lab · Galera prod"]
