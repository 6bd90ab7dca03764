"""Local sign-up: usernames are public, so an email address is refused as one."""

import pytest

from apps.accounts.models import User

pytestmark = pytest.mark.django_db


def _signup(client, username):
    return client.post(
        "/accounts/signup/",
        {
            "username": username,
            "email": "jane@example.org",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )


def test_an_email_address_is_refused_as_a_username(client):
    response = _signup(client, "jane.roe@corp-mail.io")
    assert response.status_code == 200  # the form again
    assert "Usernames are public" in response.content.decode()
    assert not User.objects.filter(username__contains="@").exists()


def test_a_plain_username_signs_up(client):
    response = _signup(client, "jane.roe")
    assert response.status_code == 302  # signed in, or asked to confirm the address first
    assert User.objects.filter(username="jane.roe").exists()


@pytest.mark.django_db
def test_allauth_mails_name_this_site_not_example_com(client, django_user_model, settings):
    """The Sites row is set from SITE_NAME and SITE_URL after migrate (issue 20: sign-up and
    password-reset mails greeted "Hello from example.com!")."""
    from django.core import mail

    django_user_model.objects.create_user("resetme", email="resetme@example.org", password="x")
    response = client.post("/accounts/password/reset/", {"email": "resetme@example.org"})
    assert response.status_code == 302
    (message,) = mail.outbox
    text = message.subject + message.body
    assert "example.com" not in text
    assert settings.SITE_NAME in text
