"""A concern's ``VIGIL_*`` settings, declared: its ``conf.py`` lists them as ``SETTINGS``.

No Django here (this runs while the settings load): ``config/settings/base.py`` imports the
``conf`` module of every installed app of ours that has one, adds the names of its ``SETTINGS``
to the known variables (a typo stops the start) and their values to the settings. Each
variable is documented in ``.env.example``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

#: ``config.settings.base.setting``: ``setting(name, cast, default=...)``.
Reader = Callable[..., Any]


@dataclass(frozen=True)
class Setting:
    """One variable: ``cast`` is a django-environ cast (``"int"``, ``"float"``, ``"json"``...);
    ``check`` returns the value to keep, or raises ``ValueError`` saying what is wrong."""

    name: str
    cast: str = "str"
    default: Any = ""
    check: Callable[[Any], Any] | None = None

    def read(self, setting: Reader) -> Any:
        value = setting(self.name, self.cast, default=self.default)
        if self.check is None:
            return value
        try:
            return self.check(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"Invalid value for {self.name}: {exc}") from exc


def read(settings: Iterable[Setting], setting: Reader) -> dict[str, Any]:
    """The values of ``settings``, from the environment through ``setting``."""
    return {s.name: s.read(setting) for s in settings}
