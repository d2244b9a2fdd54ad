from __future__ import annotations

from django.apps import AppConfig


class RegionsConfig(AppConfig):
    name = "apps.regions"
    label = "regions"
    verbose_name = "Accounts and regions"
