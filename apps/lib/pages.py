"""A subject's page (docs/architecture.md, "Show"): the whole page, or its live part
(``<page>.html#live``) when htmx polls it, or one of its charts as CSV
(``?chart=<key>&format=csv``, ``apps.lib.chartdata``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .chartdata import csv_response


def subject_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    charts: dict[str, dict[str, Any]] | None = None,
    name: str = "",
) -> HttpResponse:
    """``template`` with ``context``; ``charts`` may be downloaded as ``vigil-<name>-<key>.csv``."""
    download = csv_response(request, charts, name) if charts else None
    if download is not None:
        return download
    return render(request, f"{template}#live" if request.htmx else template, context)
