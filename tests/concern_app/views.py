"""The gadgets' region panel and gadget page."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from .models import Gadget


def region_panel_context(region: Any, limit: int | None) -> dict[str, Any]:
    gadgets = Gadget.objects.filter(region=region)
    return {"gadgets": gadgets[:limit], "total": gadgets.count()}


@require_safe
def gadget_detail(request: HttpRequest, pk: int) -> HttpResponse:
    gadget = get_object_or_404(Gadget, pk=pk)
    template = "concern_app/gadget.html#live" if request.htmx else "concern_app/gadget.html"
    return render(request, template, {"gadget": gadget})
