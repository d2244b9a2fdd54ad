"""Authentication backend: Django's ``ModelBackend``, plus the Admin group's every permission.

Local passwords sign in everyone, or only superusers (``VIGIL_LOCAL_SIGNIN``): sign-in through a
provider or a directory is then the way in; sessions of all kinds are this backend's.
Admins (members of the ``Admin`` group) hold every permission, those of models added later
included, without a migration listing them; superusers already do in Django. Everyone else
gets exactly what their groups and own permissions give (``ModelBackend``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission

from .roles import is_admin


class RoleBackend(ModelBackend):
    def authenticate(
        self, request: Any, username: Any = None, password: Any = None, **kwargs: Any
    ) -> Any:  # noqa: E501
        """A password kept by Vigil; only a superuser's with ``VIGIL_LOCAL_SIGNIN=superusers``."""
        user = super().authenticate(request, username, password, **kwargs)
        if (
            user is not None
            and settings.VIGIL_LOCAL_SIGNIN == "superusers"
            and not user.is_superuser
        ):
            return None
        return user

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        if is_admin(user_obj):
            return True
        return super().has_perm(user_obj, perm, obj)

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        if is_admin(user_obj):
            return True
        return super().has_module_perms(user_obj, app_label)

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if is_admin(user_obj) and obj is None:
            if not hasattr(user_obj, "_vigil_all_perms"):
                rows = Permission.objects.values_list("content_type__app_label", "codename")
                user_obj._vigil_all_perms = {f"{app}.{codename}" for app, codename in rows}
            return user_obj._vigil_all_perms
        return super().get_all_permissions(user_obj, obj)
