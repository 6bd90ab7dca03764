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
    from apps.owners.services.erasure import email_deletion_request

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


def _moderated(**fields) -> Trajectory:
    from apps.moderation.services.scan import trajectory_scan
    from tests.moderation.conftest import make_trajectory

    trajectory = make_trajectory(events=["ls"], **fields)
    trajectory_scan(trajectory=trajectory)
    return Trajectory.objects.get(pk=trajectory.pk)


def _moderator():
    from django.contrib.auth.models import Group

    from apps.accounts.models import User

    user = User.objects.create_user("mail-mod", password="pw-mail-mod", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name="moderators")[0])
    return User.objects.get(pk=user.pk)


def test_takedown_confirm_link_confirms_in_a_browser(browser_page, live_server, settings):
    from apps.moderation.models import TakedownRequest
    from apps.moderation.services.takedowns import takedown_request

    settings.SITE_URL = live_server.url
    trajectory = _moderated(contact_email=CONTACT_EMAIL)
    mail.outbox.clear()
    request = takedown_request(
        trajectory=trajectory, email="td.person@example.org", text="my home address is in it"
    )
    assert mail.outbox[-1].to == ["td.person@example.org"]
    page = browser_page.page
    browser_page.goto(_link(live_server))
    page.get_by_role("button", name="Confirm the request").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert page.get_by_role("status").inner_text().startswith("Confirmed.")
    request = TakedownRequest.objects.get(pk=request.pk)
    assert request.state == "open" and request.confirmed_at is not None


def test_appeal_link_of_a_rejection_appeals_in_a_browser(browser_page, live_server, settings):
    from apps.moderation.models import Appeal
    from apps.moderation.services.decisions import trajectory_reject

    settings.SITE_URL = live_server.url
    owner_mail = "appeal.owner@example.org"
    trajectory = _moderated(contact_email=owner_mail)
    mail.outbox.clear()
    trajectory_reject(trajectory=trajectory, moderator=_moderator(), note="looks like spam")
    message = next(m for m in mail.outbox if owner_mail in m.to)
    url = next(u for u in re.findall(r"https?://\S+", message.body) if "/appeal/" in u)
    page = browser_page.page
    browser_page.goto(url.removeprefix(live_server.url))
    page.locator("textarea").fill("It is a tutorial, not spam.")
    page.get_by_role("button", name="Ask for a second look").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert "back in the moderators' queue" in page.get_by_role("status").inner_text()
    appeal = Appeal.objects.get(trajectory=trajectory)
    assert appeal.text == "It is a tutorial, not spam."


def _unsubscribe_notice(live_server, email: str):
    from apps.accounts.notices import notice_send

    mail.outbox.clear()
    notice_send(kind="hidden", email=email, reason="off-topic")
    message = next(m for m in mail.outbox if email in m.to)
    header = message.extra_headers["List-Unsubscribe"]
    assert header.startswith("<") and header.endswith(">")
    return message, header[1:-1]


def test_notice_unsubscribe_link_unsubscribes_in_a_browser(browser_page, live_server, settings):
    from apps.accounts.models import NoticeOptOut
    from apps.accounts.notices import address_hash

    settings.SITE_URL = live_server.url
    email = "notice.reader@example.org"
    _, url = _unsubscribe_notice(live_server, email)
    assert url.startswith(live_server.url)
    page = browser_page.page
    browser_page.goto(url.removeprefix(live_server.url))
    page.get_by_role("button", name="Unsubscribe").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert page.get_by_role("status").inner_text().startswith("Done:")
    assert NoticeOptOut.objects.filter(address_hash=address_hash(email), kind="hidden").exists()


def test_notice_one_click_unsubscribe_post_needs_no_csrf_token(live_server, settings):
    """RFC 8058: the mail client POSTs `List-Unsubscribe=One-Click` to the URL, with no token."""
    from django.test import Client

    from apps.accounts.models import NoticeOptOut
    from apps.accounts.notices import address_hash

    settings.SITE_URL = live_server.url
    email = "one.click@example.org"
    message, url = _unsubscribe_notice(live_server, email)
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "List-Unsubscribe-Post: List-Unsubscribe=One-Click" in message.message().as_string()
    response = Client(enforce_csrf_checks=True).post(
        url.removeprefix(live_server.url), {"List-Unsubscribe": "One-Click"}
    )
    assert response.status_code == 200
    assert NoticeOptOut.objects.filter(address_hash=address_hash(email), kind="hidden").exists()


def test_password_reset_link_sets_a_new_password_in_a_browser(browser_page, live_server, settings):
    from django.test import Client

    from apps.accounts.models import User

    settings.SITE_URL = live_server.url
    User.objects.create_user("reset-me", email="reset.me@example.org", password="Old-pw-9081!")
    mail.outbox.clear()
    response = Client().post("/accounts/password/reset/", {"email": "reset.me@example.org"})
    assert response.status_code == 302
    message = mail.outbox[-1]
    assert message.to == ["reset.me@example.org"]
    url = next(u for u in re.findall(r"https?://\S+", message.body) if "/password/reset/key/" in u)
    page = browser_page.page
    # allauth builds the link from the request's host (the test client's "testserver").
    browser_page.goto("/" + url.split("://", 1)[1].split("/", 1)[1])
    new = "New-pw-3307-wide!"
    page.locator("input[name=password1]").fill(new)
    page.locator("input[name=password2]").fill(new)
    page.get_by_role("button", name="Change Password").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert "/password/reset/key/done/" in page.url
    assert "Your password is now changed." in page.content()
    assert Client().login(username="reset-me", password=new)
    assert not Client().login(username="reset-me", password="Old-pw-9081!")


def test_email_confirmation_link_verifies_in_a_browser(browser_page, live_server, settings):
    from allauth.account.models import EmailAddress
    from django.test import Client

    settings.SITE_URL = live_server.url
    assert settings.ACCOUNT_EMAIL_VERIFICATION in ("optional", "mandatory")
    mail.outbox.clear()
    response = Client().post(
        "/accounts/signup/",
        {
            "email": "confirm.me@example.org",
            "username": "confirm-me",
            "password1": "Sign-up-pw-5521!",
            "password2": "Sign-up-pw-5521!",
        },
    )
    assert response.status_code == 302, response.content[:2000]
    message = mail.outbox[-1]
    assert message.to == ["confirm.me@example.org"]
    url = next(u for u in re.findall(r"https?://\S+", message.body) if "/confirm-email/" in u)
    assert not EmailAddress.objects.get(email="confirm.me@example.org").verified
    page = browser_page.page
    browser_page.goto("/" + url.split("://", 1)[1].split("/", 1)[1])
    page.locator("form[action*=confirm-email] [type=submit]").click()
    page.wait_for_load_state()
    assert "CSRF" not in page.content()
    assert "You have confirmed confirm.me@example.org." in page.locator("body").inner_text()
    assert EmailAddress.objects.get(email="confirm.me@example.org").verified
