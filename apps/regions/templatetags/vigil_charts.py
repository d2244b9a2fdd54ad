"""``{% chart_alt chart csv_url %}``: a chart's text alternative (latest values, CSV link)."""

from __future__ import annotations

from typing import Any

from django import template

from apps.lib.chartdata import latest

register = template.Library()


@register.inclusion_tag("chart_alt.html")
def chart_alt(chart: dict[str, Any], csv_url: str = "") -> dict[str, Any]:
    return {"latest": latest(chart or {}), "csv_url": csv_url}
