"""How every API list pages, filters and orders (django-filter and DRF, configured once).

Offset pages for the small configuration lists (``Pagination``), signed keyset pages for the
grow-only history lists (``KeysetPagination``), plain rows for the big polled lists
(``PlainRows``), ``?ordering=`` with a tie-breaker (``StableOrdering``), ``?region=`` by id or
code (``RegionFilter``), bounded whole-number filters (``FilterSet``) and ``?since=&until=``
(``SinceUntilFilterSet``). What callers see: docs/api.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django.apps import apps
from django.core import signing
from django.db import models
from django.db.models import Q, QuerySet
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import BasePagination, LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils.urls import remove_query_param, replace_query_param

MAX_LIMIT = 1000
BIGGEST_ID = 2**63 - 1


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=``, 100 rows by default, at most ``MAX_LIMIT``: the small configuration
    lists (file systems, clusters, targets, hosts, channels...)."""

    max_limit = MAX_LIMIT


class KeysetPagination(BasePagination):
    """Newest first, ``limit`` rows after ``cursor``: ``{"next": url or null, "results": [...]}``.

    The key is the view's ``ordering``: a descending time column and ``-pk`` (its index must
    cover both, after any subject column the list is filtered by).
    """

    cursor_query_param = "cursor"
    limit_query_param = "limit"
    salt = "vigil.api.cursor"

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list:
        self.request = request
        self.limit = self._limit(request)
        time_field = keyset_field(view)
        position = self._position(request)
        if position is not None:
            at, pk = position
            queryset = queryset.filter(
                Q(**{f"{time_field}__lt": at}) | Q(**{time_field: at, "pk__lt": pk})
            )
        rows = list(queryset.order_by(f"-{time_field}", "-pk")[: self.limit + 1])
        self.next_position = None
        if len(rows) > self.limit:
            rows = rows[: self.limit]
            last = rows[-1]
            self.next_position = (getattr(last, time_field).isoformat(), last.pk)
        return rows

    def _limit(self, request: Request) -> int:
        raw = request.query_params.get(self.limit_query_param)
        if raw is None:
            return api_settings.PAGE_SIZE
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise ValidationError({self.limit_query_param: "a whole number of rows, at least 1"})
        return min(int(raw), MAX_LIMIT)

    def _position(self, request: Request) -> tuple[datetime, int] | None:
        raw = request.query_params.get(self.cursor_query_param)
        if raw is None:
            return None
        try:
            at, pk = signing.loads(raw, salt=self.salt)
            return datetime.fromisoformat(at), int(pk)
        except (signing.BadSignature, TypeError, ValueError):
            raise ValidationError(
                {self.cursor_query_param: "not a cursor this API gave (take the next link)"}
            ) from None

    def get_next_link(self) -> str | None:
        if self.next_position is None:
            return None
        url = self.request.build_absolute_uri()
        token = signing.dumps(list(self.next_position), salt=self.salt)
        return replace_query_param(url, self.cursor_query_param, token)

    def get_first_link(self) -> str:
        return remove_query_param(self.request.build_absolute_uri(), self.cursor_query_param)

    def get_paginated_response(self, data: list) -> Response:
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["next", "results"],
            "properties": {
                "next": {
                    "type": "string",
                    "nullable": True,
                    "format": "uri",
                    "description": "The next (older) page; null on the last one",
                },
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view: Any) -> list[dict]:
        return [
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": "Where the page starts: only from a `next` link (opaque, signed)",
                "schema": {"type": "string"},
            },
            {
                "name": self.limit_query_param,
                "required": False,
                "in": "query",
                "description": f"Rows per page (at most {MAX_LIMIT})",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            },
        ]


def keyset_field(view: Any) -> str:
    """The time column of a keyset list: the first of ``view.ordering``, descending."""
    first = view.ordering[0]
    assert first.startswith("-") and view.ordering[1:] == ["-pk"], view.ordering
    return first[1:]


class PlainRows:
    """``list()`` without model instances or a serializer per row.

    Every field of the view's ``ModelSerializer`` must be a plain column or a path through
    foreign keys (``source="region.code"``); each value is converted as its DRF field would
    (times as ISO 8601 in the current time zone, floats and integers as such, null as null).
    """

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        fields = self.get_serializer().fields
        model = self.get_queryset().model
        paths = [_path(model, field.source) for field in fields.values()]
        converters = [_converter(field) for field in fields.values()]
        names = list(fields)
        queryset = self.filter_queryset(self.get_queryset()).values_list(*paths)
        page = self.paginate_queryset(queryset)
        rows = [
            {
                name: value if value is None or convert is None else convert(value)
                for name, convert, value in zip(names, converters, row, strict=True)
            }
            for row in page
        ]
        return self.get_paginated_response(rows)


def _path(model: type[models.Model], source: str) -> str:
    """The ``values_list`` path of a serializer field's source: ``region.code`` is
    ``region__code``; a foreign key is its column (``region_id``), so that ``?ordering=region``
    still orders by the region as the model query does, not by the selected id."""
    if "." in source:
        return source.replace(".", "__")
    return model._meta.get_field(source).attname


def _converter(field: serializers.Field) -> Any:
    if isinstance(field, serializers.DateTimeField):
        return field.to_representation
    if isinstance(field, serializers.FloatField):
        return float
    if isinstance(field, serializers.IntegerField):
        return int
    if isinstance(field, serializers.CharField | serializers.ChoiceField | serializers.JSONField):
        return None
    if isinstance(field, serializers.PrimaryKeyRelatedField | serializers.BooleanField):
        return None
    raise TypeError(f"PlainRows cannot build {field.field_name} ({type(field).__name__})")


class StableOrdering(OrderingFilter):
    """DRF's ``?ordering=``, with the primary key appended as a tie-breaker, so pages never
    repeat or skip a row when the ordered column has equal values."""

    def remove_invalid_fields(
        self, queryset: QuerySet, fields: list[str], view: Any, request: Request
    ) -> list[str]:
        """DRF drops what it cannot order by and answers as if nothing was asked: a 400 naming
        the unknown terms and the ones there are."""
        valid = super().remove_invalid_fields(queryset, fields, view, request)
        unknown = [term for term in fields if term not in valid]
        if unknown:
            known = [
                name for name, _ in self.get_valid_fields(queryset, view, {"request": request})
            ]
            raise ValidationError(
                {
                    self.ordering_param: [
                        f"cannot order by {', '.join(map(repr, unknown))}: "
                        f"one of {', '.join(known)}, or -field for descending"
                    ]
                }
            )
        return valid

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
        """A region that does not exist is a 400, not an empty list a script takes for "all
        quiet" (``?region=eu-west-9``)."""
        if not value:
            return qs
        regions = apps.get_model("regions", "Region").objects
        if value.isascii() and value.isdigit():
            found = int(value) <= BIGGEST_ID and regions.filter(pk=int(value)).exists()
            where = {self.field_name: int(value)}
        else:
            found = regions.filter(code=value).exists()
            where = {f"{self.field_name}__code": value}
        if not found:
            raise ValidationError(
                {"region": [f"no region or site {value[:100]!r}: give an id or a code of "
                            "/api/regions/"]}
            )  # fmt: skip
        return qs.filter(**where)


class IdFilter(django_filters.NumberFilter):
    """An id or another whole number, within a 64-bit column's range (else a 400)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", -BIGGEST_ID - 1)
        kwargs.setdefault("max_value", BIGGEST_ID)
        super().__init__(*args, **kwargs)


class FilterSet(django_filters.FilterSet):
    """django-filter's, with whole numbers for ids and integer columns (``IdFilter``, bounded to
    64 bits: ``?account=<40 digits>`` is a 400, not an overflow); a foreign key to a region is a
    ``RegionFilter``, a field with choices (``status``) a choice. A list with only such filters
    names them in its view's ``filterset_fields`` (``FilterBackend`` builds them on this class);
    a subclass declares only the others."""

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

    @classmethod
    def filter_for_field(
        cls, field: models.Field, field_name: str, lookup_expr: str | None = None
    ) -> django_filters.Filter:
        to_region = field.is_relation and field.related_model._meta.label == "regions.Region"
        if to_region and lookup_expr in (None, "exact"):
            return RegionFilter(field_name=field_name)
        return super().filter_for_field(field, field_name, lookup_expr)


class FilterBackend(DjangoFilterBackend):
    """A view's ``filterset_fields`` are built on ``FilterSet`` (not django-filter's own), and a
    list refuses a query parameter it does not know (a 400 naming it and those it takes),
    rather than answering everything as if the misspelt filter had not been asked."""

    filterset_base = FilterSet

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        if getattr(view, "action", None) == "list":
            known = self._known_parameters(view, self.get_filterset_class(view, queryset))
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                raise ValidationError(
                    {
                        unknown[0]: [
                            "not a parameter of this list: it takes "
                            f"{', '.join(sorted(known - {api_settings.URL_FORMAT_OVERRIDE}))}"
                        ]
                    }
                )
        return super().filter_queryset(request, queryset, view)

    @staticmethod
    def _known_parameters(view: Any, filterset_class: Any) -> set[str]:
        known = {api_settings.URL_FORMAT_OVERRIDE}
        if filterset_class is not None:
            known |= set(filterset_class.base_filters)
        for backend in getattr(view, "filter_backends", ()):
            if issubclass(backend, OrderingFilter):
                known.add(backend.ordering_param)
        paginator = getattr(view, "paginator", None)
        for attribute in (
            "limit_query_param",
            "offset_query_param",
            "cursor_query_param",
            "page_query_param",
            "page_size_query_param",
        ):
            if name := getattr(paginator, attribute, None):
                known.add(name)
        return known


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
