"""Usernames are shown publicly, so they must not carry an email address."""

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError


def no_email_in_username(value: str) -> None:
    if "@" in value:
        raise ValidationError(
            "Usernames are public: use letters, digits and . + - _ but not an email address."
        )


username_validators = [UnicodeUsernameValidator(), no_email_in_username]
