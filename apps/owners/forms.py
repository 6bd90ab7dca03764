"""Forms of the owner's pages. They check what a person typed; services do the rest."""

from __future__ import annotations

from django import forms
from django.conf import settings

from apps.trajectories.models import Polarity, Visibility

POLARITY_CHOICES = [
    (Polarity.NONE, "Not rated"),
    (Polarity.POSITIVE, "Good"),
    (Polarity.NEGATIVE, "Bad"),
]


class TrajectoryEditForm(forms.Form):
    """What the owner may change: the trajectory services' UPDATABLE fields."""

    title = forms.CharField(max_length=300, required=False)
    polarity = forms.ChoiceField(choices=POLARITY_CHOICES)
    feedback_text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 5}), max_length=100_000
    )
    visibility = forms.ChoiceField(choices=Visibility.choices, widget=forms.RadioSelect)
    license_agreed = forms.BooleanField(required=False)

    def __init__(self, *args, has_license: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.has_license = has_license
        self.fields[
            "license_agreed"
        ].label = f"I agree to share it under the site's licence ({settings.TRAJHUB_LICENSE})"

    def clean(self):
        data = super().clean()
        if (
            data.get("visibility") == Visibility.PUBLIC
            and not self.has_license
            and not data.get("license_agreed")
        ):
            self.add_error(
                "license_agreed", "To make it public, agree to the site's licence first."
            )
        return data


class ClaimForm(forms.Form):
    link = forms.CharField(
        max_length=500, label="Link or id", help_text="The link you got when you shared it."
    )
    password = forms.CharField(max_length=200, widget=forms.PasswordInput(render_value=False))


class EmailForm(forms.Form):
    email = forms.EmailField(max_length=254)
