"""Email and password sign-up, verification, password reset, and outgoing mail (issue 6).

Sign-up takes an email; TRAJHUB_EMAIL_VERIFICATION (mandatory with DATABASE_URL, optional in the
embedded default) decides whether it must be confirmed; "Forgot your password?" sends a working
link; mail goes out through SMTP when EMAIL_HOST is set (one test runs a real SMTP server), else
into files under var/mail/."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from email import message_from_bytes
from email.message import Message

import pytest
from aiosmtpd.controller import Controller
from allauth.account.models import EmailAddress
from django.conf import settings as django_settings
from django.test import Client

from apps.accounts.models import User

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://testserver(/accounts/[^\s]+/)")


def signup(client: Client, username: str, email: str | None = "jane@example.org"):
    data = {"username": username, "password1": "a-long-pass-phrase-9"}
    data["password2"] = data["password1"]
    if email is not None:
        data["email"] = email
    return client.post("/accounts/signup/", data)


def link_in(body: str) -> str:
    match = LINK.search(body)
    assert match, body
    return match.group(1)


def test_sign_up_asks_for_an_email_and_refuses_without_one(client):
    form = client.get("/accounts/signup/").content.decode()
    assert 'name="email"' in form and 'type="email"' in form
    response = signup(client, "noemail", email=None)
    assert response.status_code == 200 and not User.objects.filter(username="noemail").exists()


def test_mandatory_verification_signs_in_only_after_the_link(client, settings, mailoutbox):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    response = signup(client, "jane")
    assert response.status_code == 302 and response["Location"] == "/accounts/confirm-email/"
    assert "_auth_user_id" not in client.session
    (message,) = mailoutbox
    assert message.to == ["jane@example.org"]
    confirm = link_in(message.body)
    assert client.post(confirm).status_code == 302
    assert EmailAddress.objects.get(email="jane@example.org").verified
    signed_in = client.post(
        "/accounts/login/", {"login": "jane@example.org", "password": "a-long-pass-phrase-9"}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == "/me/"


def test_optional_verification_signs_in_at_once_and_still_sends_the_link(
    client, settings, mailoutbox
):
    settings.ACCOUNT_EMAIL_VERIFICATION = "optional"
    response = signup(client, "jim", email="jim@example.org")
    assert response.status_code == 302 and response["Location"] == "/me/"
    assert client.get("/me/").status_code == 200
    assert len(mailoutbox) == 1 and link_in(mailoutbox[0].body).startswith("/accounts/confirm")


def reset_password(client: Client, email: str) -> None:
    response = client.post("/accounts/password/reset/", {"email": email})
    assert response.status_code == 302 and response["Location"] == "/accounts/password/reset/done/"


def follow_reset_link(client: Client, path: str, new_password: str) -> None:
    page = client.get(path)  # allauth moves the key into the session and redirects
    form_path = page["Location"] if page.status_code == 302 else path
    done = client.post(form_path, {"password1": new_password, "password2": new_password})
    assert done.status_code == 302, done.content[:500]


def test_forgot_password_sends_a_link_that_sets_a_new_one(client, mailoutbox, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "optional"
    user = User.objects.create_user("kim", email="kim@example.org", password="old-pass-phrase-1")
    EmailAddress.objects.create(user=user, email="kim@example.org", verified=True, primary=True)
    reset_password(client, "kim@example.org")
    (message,) = mailoutbox
    assert message.to == ["kim@example.org"] and message.subject.startswith("[TrajHub] ")
    follow_reset_link(client, link_in(message.body), "new-pass-phrase-2")
    assert Client().login(username="kim", password="new-pass-phrase-2")
    # An address without an account gets the same answer (no enumeration) and no reset link.
    mailoutbox.clear()
    reset_password(Client(), "nobody@example.org")
    assert all("password/reset/key" not in m.body for m in mailoutbox)


class Inbox:
    """An aiosmtpd handler that keeps every message it receives."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(message_from_bytes(envelope.original_content or envelope.content))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_reset_mail_goes_through_a_real_smtp_server(client, settings):
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    controller.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
        settings.EMAIL_USE_TLS, settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = (
            False,
            "",
            "",
        )
        settings.DEFAULT_FROM_EMAIL = "TrajHub <noreply@trajhub.test>"
        user = User.objects.create_user("lee", email="lee@example.org", password="old-pass-9")
        EmailAddress.objects.create(user=user, email="lee@example.org", verified=True, primary=True)
        reset_password(client, "lee@example.org")
    finally:
        controller.stop()
    (message,) = inbox.messages
    assert message["To"] == "lee@example.org"
    assert message["From"] == "TrajHub <noreply@trajhub.test>"
    body = message.get_payload(decode=True).decode()
    follow_reset_link(client, link_in(body), "new-pass-phrase-3")
    assert Client().login(username="lee", password="new-pass-phrase-3")


def _settings_value(env: dict[str, str], expression: str) -> str:
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "EMAIL_", "TRAJHUB_EMAIL"))
    }
    result = subprocess.run(
        [sys.executable, "-c", f"import config.settings as s; print({expression})"],
        env={**clean, "DJANGO_SECRET_KEY": "x", **env},
        capture_output=True,
        text=True,
        cwd=django_settings.BASE_DIR,
        check=True,
    )
    return result.stdout.strip()


def test_verification_and_the_mail_backend_follow_the_environment(tmp_path):
    value = "(s.ACCOUNT_EMAIL_VERIFICATION, s.EMAIL_BACKEND.rsplit('.', 2)[-2])"
    var = {"TRAJHUB_VAR_DIR": str(tmp_path)}
    assert _settings_value(var, value) == "('optional', 'filebased')"
    assert _settings_value(var, "s.EMAIL_FILE_PATH") == str(tmp_path / "mail")
    postgres = {**var, "DATABASE_URL": "postgres://u@127.0.0.1:5432/x"}
    assert _settings_value(postgres, value) == "('mandatory', 'filebased')"
    smtp = {
        **postgres,
        "TRAJHUB_EMAIL_VERIFICATION": "optional",
        "EMAIL_HOST": "smtp.example.org",
        "EMAIL_PORT": "587",
        "EMAIL_HOST_USER": "trajhub",
        "EMAIL_HOST_PASSWORD": "pw",
        "DEFAULT_FROM_EMAIL": "TrajHub <hub@example.org>",
    }
    assert _settings_value(smtp, value) == "('optional', 'smtp')"
    assert (
        _settings_value(
            smtp,
            "(s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_HOST_USER, s.EMAIL_USE_TLS, s.DEFAULT_FROM_EMAIL)",
        )
        == "('smtp.example.org', 587, 'trajhub', True, 'TrajHub <hub@example.org>')"
    )
