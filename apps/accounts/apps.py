from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Users and API keys"

    def ready(self) -> None:
        from . import schema  # noqa: F401  (registers the OpenAPI security scheme)
