"""Browser tests: real Chromium (Debian's /usr/bin/chromium) driven by Playwright's sync API.

Shared by every page's browser tests. Each test gets `browser_page` (a fresh context and page
on pytest-django's live server, with dialogs and console errors recorded) and can sign a user
in with `browser_login(context, user)`. Screenshots go to tests/browser/screenshots/ (ignored
by git): look at them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a
# thread with a running loop unless told that this is deliberate (it is: tests are sequential).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("TRAJHUB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        skip_or_fail(f"Chromium is not at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("Playwright for Python is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@dataclass
class BrowserPage:
    """A page on the live server, with what the page did that a user would notice."""

    page: object
    context: object
    base_url: str
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def goto(self, path: str, **kwargs):
        return self.page.goto(self.base_url + path, **kwargs)

    def screenshot(self, name: str, *, full_page: bool = False) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def browser_page(browser, live_server, transactional_db):
    """A desktop-sized page; `browser_page.page.set_viewport_size(PHONE)` for a phone."""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    result = BrowserPage(page=page, context=context, base_url=live_server.url)

    def on_dialog(dialog):
        result.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(message):
        if message.type == "error":
            result.console_errors.append(message.text)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda error: result.page_errors.append(str(error)))
    # Generous: the live server shares two cores with the browser and, in CI, with nothing else;
    # under a loaded machine (load 10+) full-page screenshots and lazy loading took over 10 s.
    page.set_default_timeout(30_000)
    yield result
    context.close()


@pytest.fixture
def browser_login(live_server):
    """Sign `user` in for a browser context by giving it a real session cookie."""
    from django.conf import settings
    from django.test import Client

    def login(context, user) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
        )

    return login
