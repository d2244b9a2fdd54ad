"""Charts on pages: ``{% timeseries chart source csv_url script %}`` draws ``chart`` (its data as
JSON in ``<script id="<source>">``, read by static/js/charts.js, or ``script`` when the view
encoded it already with ``json_script``) followed by its text alternative,
``{% chart_alt chart csv_url %}`` (latest values, CSV link)."""

from __future__ import annotations

from typing import Any

from django import template

from apps.lib.chartdata import latest

register = template.Library()


@register.inclusion_tag("chart_alt.html")
def chart_alt(chart: dict[str, Any], csv_url: str = "") -> dict[str, Any]:
    return {"latest": latest(chart or {}), "csv_url": csv_url}


@register.inclusion_tag("timeseries.html")
def timeseries(
    chart: dict[str, Any], source: str, csv_url: str = "", script: str = ""
) -> dict[str, Any]:
    return {"chart": chart, "source": source, "script": script, **chart_alt(chart, csv_url)}
