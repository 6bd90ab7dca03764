"""Forms of the public moderation pages: report, takedown request, appeal."""

from __future__ import annotations

from django import forms

from apps.moderation.models import ReportReason
from apps.moderation.services.limits import TEXT_LIMIT


class ReportForm(forms.Form):
    reason = forms.ChoiceField(
        choices=ReportReason.choices, widget=forms.RadioSelect, label="What is wrong?"
    )
    text = forms.CharField(
        required=False,
        max_length=TEXT_LIMIT,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Details (optional)",
        help_text="Which step, what you saw. Do not paste a secret you found: say where it is.",
    )
    email = forms.EmailField(
        required=False,
        label="Your email (optional)",
        help_text="Only our moderators see it, to ask you a question. It is never shown.",
    )


class TakedownForm(forms.Form):
    email = forms.EmailField(
        label="Your email",
        help_text="We send a link to confirm the request there, and the outcome later.",
    )
    text = forms.CharField(
        max_length=TEXT_LIMIT,
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Which personal data of yours is in it?",
        help_text="Say which steps and what (your name, your address, ...).",
    )


class AppealForm(forms.Form):
    text = forms.CharField(
        max_length=TEXT_LIMIT,
        widget=forms.Textarea(attrs={"rows": 6}),
        label="Why should it be published after all?",
    )
