"""The API docs page works from our own static files, under our CSP, with no network."""

import pytest

pytestmark = pytest.mark.browser


def test_api_docs_render_the_operations_without_csp_errors(browser_page):
    response = browser_page.goto("/api/docs")
    assert response.status == 200
    csp = response.headers["content-security-policy"]
    assert (
        "script-src 'self';" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    page = browser_page.page
    page.wait_for_selector(".opblock", timeout=15_000)
    assert page.locator(".opblock").count() >= 5  # one block per operation
    browser_page.screenshot("api-docs-desktop")
    assert browser_page.page_errors == []
    assert [e for e in browser_page.console_errors if "Content Security Policy" in e] == []
