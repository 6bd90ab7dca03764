"""A django-filter FilterSet that builds its filters and its form's fields once per class.

django-filter deep-copies every filter for each FilterSet it makes, builds a form class and a
form field per filter, and Django then deep-copies those fields again for the form: about 30
deep copies for each request to a list with a dozen filters, a large part of the list API's
fixed cost (issue 24). None of it is needed when nothing changes the filters or fields per
request: they are only read (a field's `clean()`, a filter's `filter()`). Here they are built
once and shared by every instance, and the methods named by `method=` are called on the
instance directly instead of through a copy that knows its parent.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from django.http import QueryDict
from django_filters.constants import EMPTY_VALUES


class _SharedFields(dict):
    """A form class's fields, which its forms use as they are rather than a deep copy each:
    no form of a SharedFilterSet changes its fields (they are read by clean() only)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedFields:
        return self


class SharedFilterSet(django_filters.FilterSet):
    """A FilterSet whose filters and form fields are built once and never changed per request.

    A subclass must not change `self.filters` or `self.form.fields` for one request (narrow a
    field's choices, say): they belong to every request at once."""

    def __init__(
        self,
        data: QueryDict | dict[str, Any] | None = None,
        queryset: QuerySet | None = None,
        *,
        request: Any = None,
        prefix: str | None = None,
    ) -> None:
        # FilterSet.__init__ without its deep copy of base_filters.
        if queryset is None:
            queryset = self._meta.model._default_manager.all()
        self.is_bound = data is not None
        self.data = data or QueryDict()
        self.queryset = queryset
        self.request = request
        self.form_prefix = prefix
        self.filters = self.base_filters

    def get_form_class(self) -> type[forms.Form]:
        cls = type(self)
        form_class = cls.__dict__.get("_shared_form_class")
        if form_class is None:
            model = self._meta.model
            for filter_ in self.base_filters.values():
                filter_.model = model  # what FilterSet.__init__ sets on its copies (labels)
            fields = {name: filter_.field for name, filter_ in self.base_filters.items()}
            form_class = type(f"{cls.__name__}Form", (self._meta.form,), fields)
            form_class.base_fields = _SharedFields(form_class.base_fields)
            # Two requests building it at once build the same class: either may be kept.
            cls._shared_form_class = form_class
        return form_class

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        for name, value in self.form.cleaned_data.items():
            filter_ = self.filters[name]
            if isinstance(filter_.method, str):
                # What django-filter's FilterMethod does, with this instance as the parent:
                # the shared filter has none.
                if value in EMPTY_VALUES:
                    continue
                queryset = getattr(self, filter_.method)(queryset, filter_.field_name, value)
            else:
                queryset = filter_.filter(queryset, value)
        return queryset
