"""How every API list pages, filters and orders (django-filter and DRF, configured once).

- ``Pagination``: ``?limit=&offset=``, 100 rows by default, at most ``MAX_LIMIT``.
- ``StableOrdering``: DRF's ``?ordering=``, with the primary key appended as a tie-breaker, so
  pages never repeat or skip a row when the ordered column has equal values.
- ``RegionFilter``: ``?region=`` takes a region's id (a number) or its code (``eu-west-1``,
  a site's short name), as the API always took one or the other.
- ``FilterSet``: django-filter's, with whole numbers for ids and integer columns
  (``IdFilter``), bounded to 64 bits: ``?account=<40 digits>`` is a 400, not an overflow.
- ``SinceUntilFilterSet``: ``?since=&until=`` (ISO 8601) on history-like lists.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django.db import models
from django.db.models import QuerySet
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

MAX_LIMIT = 1000
BIGGEST_ID = 2**63 - 1


class Pagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT


class StableOrdering(OrderingFilter):
    def get_ordering(self, request: Request, queryset: QuerySet, view: Any) -> list[str] | None:
        ordering = super().get_ordering(request, queryset, view)
        if not ordering:
            return ordering
        ordering = list(ordering)
        if not {"pk", "-pk", "id", "-id"} & set(ordering):
            ordering.append("-pk" if ordering[0].startswith("-") else "pk")
        return ordering


class RegionFilter(django_filters.CharFilter):
    """A region by id or by code; ``field_name`` is the path to the region (``cluster__region``)."""

    def __init__(self, field_name: str = "region", **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text", "Region or site: its id (a number) or its code (eu-west-1, a site name)"
        )
        super().__init__(field_name=field_name, **kwargs)

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if not value:
            return qs
        if value.isascii() and value.isdigit():
            if int(value) > BIGGEST_ID:
                return qs.none()
            return qs.filter(**{self.field_name: int(value)})
        return qs.filter(**{f"{self.field_name}__code": value})


class IdFilter(django_filters.NumberFilter):
    """An id or another whole number, within a 64-bit column's range (else a 400)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", -BIGGEST_ID - 1)
        kwargs.setdefault("max_value", BIGGEST_ID)
        super().__init__(*args, **kwargs)


class FilterSet(django_filters.FilterSet):
    FILTER_DEFAULTS = {
        **FILTER_FOR_DBFIELD_DEFAULTS,
        **{
            field: {"filter_class": IdFilter}
            for field in (
                models.AutoField,
                models.IntegerField,
                models.SmallIntegerField,
                models.PositiveIntegerField,
                models.PositiveSmallIntegerField,
                models.ForeignKey,
                models.OneToOneField,
            )
        },
    }


class SinceUntilFilterSet(FilterSet):
    """A FilterSet with ``since``/``until`` on ``Meta.time_field`` (``created`` by default)."""

    since = django_filters.IsoDateTimeFilter(
        method="filter_since", help_text="Only rows at or after this time (ISO 8601)"
    )
    until = django_filters.IsoDateTimeFilter(
        method="filter_until", help_text="Only rows before this time (ISO 8601)"
    )
    time_field = "created"

    def filter_since(self, qs: QuerySet, name: str, value: datetime) -> QuerySet:
        return qs.filter(**{f"{self.time_field}__gte": as_utc(value, name)})

    def filter_until(self, qs: QuerySet, name: str, value: datetime) -> QuerySet:
        return qs.filter(**{f"{self.time_field}__lt": as_utc(value, name)})


def as_utc(value: datetime, name: str) -> datetime:
    """The same instant in UTC: PostgreSQL refuses offsets past ±15:59 that Python accepts."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValidationError({name: "out of range"}) from None
