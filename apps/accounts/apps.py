from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Users and API keys"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group

        from .audit import track

        track(
            get_user_model(),
            # date_joined is when the account was made, not a setting; the admin's form drops
            # its microseconds on every save, which read as a change of it.
            exclude=["last_login", "date_joined"],
            secrets=["password"],
            m2m=["groups", "user_permissions"],
        )
        track(Group, m2m=["permissions"])

        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.db.models.signals import m2m_changed, post_save

        from . import receivers

        user_model = get_user_model()
        post_save.connect(receivers.user_saved, sender=user_model, dispatch_uid="vigil-keys-user")
        m2m_changed.connect(
            receivers.groups_changed,
            sender=user_model.groups.through,
            dispatch_uid="vigil-keys-groups",
        )

        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.db.models.signals import pre_delete

        from apps.lib.keep import refuse_deleting_history

        pre_delete.connect(refuse_deleting_history, dispatch_uid="vigil-keep-history")

        from django.contrib.auth import signals

        signals.user_logged_in.connect(receivers.signed_in, dispatch_uid="vigil-signed-in")
        signals.user_login_failed.connect(receivers.sign_in_failed, dispatch_uid="vigil-failed")
        signals.user_logged_out.connect(receivers.signed_out, dispatch_uid="vigil-signed-out")

        from django.db.models.signals import post_migrate

        post_migrate.connect(receivers.ensure_roles, dispatch_uid="vigil-ensure-roles")
