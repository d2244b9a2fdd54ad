from __future__ import annotations

from django.apps import AppConfig


class PrometheusConfig(AppConfig):
    name = "apps.prometheus"
    label = "prometheus"
    verbose_name = "Prometheus export"
