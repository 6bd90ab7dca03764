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


def test_api_docs_link_back_to_the_site(browser_page):
    """Issue 11: the docs were a dead end; their description links back to the site."""
    browser_page.goto("/api/docs")
    page = browser_page.page
    page.wait_for_selector(".opblock", timeout=15_000)
    back = page.get_by_role("link", name="← Back to the site")
    assert back.is_visible()
    assert back.get_attribute("href") == "/"  # Swagger UI opens it in a new tab
    page.goto(browser_page.base_url + back.get_attribute("href"))
    assert page.locator(".site-header").count() == 1
