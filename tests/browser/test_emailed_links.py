"""Forms reached from an emailed link, followed and submitted in real Chromium.

The test client sends no Origin header, so it never saw that a page sent with
`Referrer-Policy: no-referrer` makes the browser send `Origin: null` with the page's own form,
which Django's CSRF check refuses ("Origin checking failed - null").
"""

from __future__ import annotations

import re

from django.core import mail

from apps.datasets import services
from apps.datasets.models import OptOut
from apps.trajectories.models import Trajectory
from tests.datasets.conftest import CONTACT_EMAIL, release_storage, share  # noqa: F401


def _link(live_server) -> str:
    """The last mailed link to the live server, as the mail gives it."""
    urls = re.findall(r"https?://\S+", mail.outbox[-1].body)
    url = next(u for u in urls if u.startswith(live_server.url))
    return url.removeprefix(live_server.url)


def test_email_deletion_link_deletes_in_a_browser(browser_page, live_server, settings):
    from apps.accounts.services.erasure import email_deletion_request

    settings.SITE_URL = live_server.url
    shared = share(user=None, seed=41, email=CONTACT_EMAIL)
    mail.outbox.clear()
    email_deletion_request(email=CONTACT_EMAIL, client="127.0.0.1")
    page = browser_page.page
    browser_page.goto(_link(live_server))
    page.get_by_role("button", name=re.compile("Delete")).click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert not Trajectory.objects.filter(pk=shared.pk).exists()


def test_release_optout_link_takes_out_in_a_browser(
    browser_page,
    live_server,
    settings,
    release_storage,  # noqa: F811
):
    settings.SITE_URL = live_server.url
    settings.TRAJHUB_RELEASE_OPT_OUT_DAYS = 7
    anonymous = share(user=None, seed=42, email=CONTACT_EMAIL)
    mail.outbox.clear()
    assert services.release_run(force=True).action == "announced"
    message = next(m for m in mail.outbox if CONTACT_EMAIL in m.to)
    url = next(u for u in re.findall(r"https?://\S+", message.body) if "/releases/optout/" in u)
    page = browser_page.page
    browser_page.goto(url.removeprefix(live_server.url))
    page.get_by_role("button", name="Take out").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert OptOut.objects.filter(trajectory=anonymous).exists()
