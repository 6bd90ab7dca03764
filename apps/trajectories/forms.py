"""Forms of the site pages. They validate what a person typed; services do the rest."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from apps.core.http import BodyError, maybe_gunzip
from apps.trajectories.importers import FORMATS
from apps.trajectories.models import Polarity, Visibility
from apps.trajectories.services import ShareOptions

POLARITY_CHOICES = [
    (Polarity.NONE, "Not rated"),
    (Polarity.POSITIVE, "Good"),
    (Polarity.NEGATIVE, "Bad"),
]


def format_choices() -> list[tuple[str, str]]:
    """Every importer by its label, alphabetically (the registry's order is detection order)."""
    return sorted(((name, module.LABEL) for name, module in FORMATS.items()), key=lambda c: c[1])


class UploadForm(forms.Form):
    """The upload page: a trajectory file and how to share it (the share API's multipart fields).

    `clean_file` reads the file (inflating .gz within the decompressed-size limit): the bytes
    are in `cleaned_data["data"]`. A file over a size limit fails with the code "too_large",
    which the view answers with 413.
    """

    file = forms.FileField(
        required=True,
        allow_empty_file=True,  # an empty file gets the importers' own words ("the body is empty")
        error_messages={"required": "Choose a trajectory file to share."},
    )
    format = forms.ChoiceField(required=False, choices=())
    # Not required: a client that leaves it out gets the default, as with the share API.
    visibility = forms.ChoiceField(
        required=False, choices=Visibility.choices, initial=Visibility.PRIVATE
    )
    license_agreed = forms.BooleanField(required=False)
    polarity = forms.ChoiceField(required=False, choices=POLARITY_CHOICES, initial=Polarity.NONE)
    title = forms.CharField(required=False, max_length=300)
    feedback_text = forms.CharField(required=False, max_length=10_000, strip=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Built per form: importers registered after import time are offered too.
        self.fields["format"].choices = [("", "Detect automatically"), *format_choices()]

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.TRAJHUB_MAX_BODY_BYTES
        if upload.size is not None and upload.size > limit:
            raise forms.ValidationError(
                f"The file is {filesizeformat(upload.size)}; the limit is {filesizeformat(limit)}.",
                code="too_large",
            )
        try:
            self.cleaned_data["data"] = maybe_gunzip(upload.read())
        except BodyError as exc:
            raise forms.ValidationError(
                f"The file cannot be read: {exc.message}.",
                code="too_large" if exc.status == 413 else "unreadable",
            ) from None
        return upload

    def clean_visibility(self) -> str:
        return self.cleaned_data.get("visibility") or Visibility.PRIVATE

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("visibility") == Visibility.PUBLIC and not cleaned.get("license_agreed"):
            self.add_error(
                "license_agreed",
                forms.ValidationError(
                    f"To share publicly, agree to the licence ({settings.TRAJHUB_LICENSE}).",
                    code="required",
                ),
            )
        return cleaned

    # The ids of the fields on the upload page, for the error summary's links.
    FIELD_IDS = {
        "file": "upload-file",
        "format": "upload-format",
        "visibility": "step-visibility",
        "license_agreed": "license-agreed",
        "polarity": "step-feedback",
        "title": "upload-title",
        "feedback_text": "upload-feedback",
    }

    def error_summary(self) -> list[tuple[str, str]]:
        """(element id, message) of every field error, in the page's order."""
        return [
            (self.FIELD_IDS.get(name, ""), str(message))
            for name in self.fields
            for message in self.errors.get(name, [])
        ]

    @property
    def chosen_format_label(self) -> str:
        """The label of the format the person chose (after validation), "" for detection."""
        name = getattr(self, "cleaned_data", {}).get("format")
        return FORMATS[name].LABEL if name in FORMATS else ""

    def share_options(self, *, client_ip: str) -> ShareOptions:
        values = self.cleaned_data
        upload = values["file"]
        return ShareOptions(
            visibility=values["visibility"],
            polarity=values.get("polarity") or "",
            feedback_text=values.get("feedback_text", ""),
            title=values.get("title", ""),
            license_agreed=values["visibility"] == Visibility.PUBLIC and values["license_agreed"],
            format=values.get("format") or None,
            filename=upload.name or "",
            content_type=upload.content_type or "",
            client_ip=client_ip,
        )
