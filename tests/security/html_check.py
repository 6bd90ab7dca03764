"""An HTML checker for the security tests: what in a page would run script or break the CSP."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from apps.core.middleware import POLICY

RUNNABLE_SCHEME = re.compile(r"^(?:javascript|data|vbscript|file):", re.I)
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "srcset", "data"}
NEVER_TAGS = {
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "base",
    "frame",
    "frameset",
    "style",
    "link",
}


class Page(HTMLParser):
    """Every element of an HTML document, with what would make it run script."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._script_open = False
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        values = {name: value or "" for name, value in attrs}
        if tag == "script":
            self._script_open = True
            if not values.get("src", "").startswith("/static/"):
                self.problems.append(f"<script> without a static src: {values}")
        # The stats page's charts are our own SVG (apps/stats/charts.py, class "chart ..."); no
        # trajectory text ever becomes an <svg> element (nh3 drops it), which is what this catches.
        own_chart = tag == "svg" and values.get("class", "").startswith("chart ")
        if (
            tag in NEVER_TAGS
            and not own_chart
            and not (tag == "link" and values.get("rel") in _OWN_LINKS)
        ):
            self.problems.append(f"<{tag}> {values}")
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            self.problems.append("<meta http-equiv=refresh>")
        for name, value in values.items():
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=…> event handler")
            if name == "style":
                self.problems.append(f"<{tag} style=…> inline style")
            if name in URL_ATTRIBUTES:
                # Browsers drop whitespace and control characters before the scheme.
                squeezed = re.sub(r"[\x00-\x20]", "", value)
                if RUNNABLE_SCHEME.match(squeezed):
                    self.problems.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script_open = False

    def handle_data(self, data):
        if self._script_open and data.strip():
            self.problems.append("inline script")


_OWN_LINKS = {"stylesheet", "icon", "alternate", "canonical"}


def check(response, name: str, *, status: int = 200) -> list[str]:
    """Problems of one HTML response: runnable markup, and a CSP other than the strict one."""
    assert response.status_code == status, (name, response.status_code)
    problems = [f"{name}: {problem}" for problem in Page(response.content.decode()).problems]
    if response["Content-Type"].startswith("text/html"):
        csp = response.get("Content-Security-Policy", "")
        if csp != POLICY:
            problems.append(f"{name}: CSP {csp!r}")
    return problems
