from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Users and API keys"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group

        from apps.api import schema  # noqa: F401  (registers the OpenAPI security scheme)

        from .audit import track

        track(
            get_user_model(),
            exclude=["last_login"],
            secrets=["password"],
            m2m=["groups", "user_permissions"],
        )
        track(Group, m2m=["permissions"])

        from django.db.models.signals import pre_delete

        from apps.lib.keep import refuse_deleting_history

        pre_delete.connect(refuse_deleting_history, dispatch_uid="vigil-keep-history")
