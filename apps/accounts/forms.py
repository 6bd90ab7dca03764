"""Forms of accounts' pages. They check what a person typed; services do the rest."""

from __future__ import annotations

from django import forms


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=100, required=True, label="Name")
