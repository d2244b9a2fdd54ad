"""The browser: one Debian chromium for the whole session, a fresh context per test, and
axe-core's script for the accessibility checks."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.helpers import AXE_DIR

CHROMIUM = "/usr/bin/chromium"
# Without these, chromium keeps trying to reach Google's hosts from a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Chromium:
    """The one chromium, started by the first test that asks for it and stopped after the last
    of a run of such tests: Playwright's sync API keeps its event loop running in this thread
    while it is open, and asyncio.run() refuses to start under it (the probes' tests use it)."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self) -> object:
        if self.browser is None:
            from playwright.sync_api import sync_playwright

            # Playwright's sync API runs an event loop in this thread; the ORM is not used meanwhile.
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS
            )
        return self.browser

    def stop(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
            if self.playwright is not None:
                self.playwright.stop()
        finally:
            self.browser = self.playwright = None
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


_CHROMIUM = _Chromium()


@pytest.fixture
def chromium() -> object:
    """The one chromium of this process (starting one costs about a second and 150 MB); each
    test gets its own context (cookies, storage) from ``browser_page``. The browser tests go
    together (last in a serial run, one group under xdist), so it starts once."""
    return _CHROMIUM.get()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the test's own teardown (its browser context closed): chromium stops unless the
    next test of this process uses it too."""
    try:
        return (yield)
    finally:
        if "chromium" in getattr(item, "fixturenames", ()) and (
            nextitem is None or "chromium" not in getattr(nextitem, "fixturenames", ())
        ):
            _CHROMIUM.stop()


@pytest.fixture
def browser_page(chromium) -> Iterator[object]:
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def demo_in_chromium(admin, collected_demo, browser_page) -> tuple[object, int, int]:
    """The collected demo (``collected_demo``) and a browser page for ``admin``: (the page, the
    region's pk, the file system's pk). The database is set up before the browser starts: no
    ORM once it runs, see tests/test_browser.py."""
    return browser_page, *collected_demo


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, from tests/js (``npm ci`` there, as ``make test`` does, if missing)."""
    # the harness loads only for the browser tests
    from tests.services import npm_ci

    npm_ci("axe-core/axe.min.js")
    return (AXE_DIR / "node_modules" / "axe-core" / "axe.min.js").read_text()
