"""Vigil's environment variables, declared: one ``Setting`` each, and the rules they obey.

Every app of ours that reads the environment lists its variables as ``SETTINGS`` in its
``conf.py`` (the core's, read by ``config/settings``, are ``apps/lib/conf.py``'s).
``config/settings/base.py`` reads them all through ``declared`` and ``read``; the known
``VIGIL_*`` names (a typo stops the start), ``.env.example``'s check and the generated
``docs/configuration.md`` (``manage.py settings_reference``) all come from these declarations.
A rule a value must obey beyond its type (a CIDR list, auto/true/false, a rate, a range) is one
of the checks below, written once. No Django here but its exception: this runs while the
settings load. docs/architecture.md ("Settings are declared, once") has the rest.
"""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

ROOT = Path(__file__).resolve().parents[2]

#: Any variable may instead be given as ``NAME_FILE`` naming a file that holds the value.
env = environ.FileAwareEnv()

#: A default meaning "no default: the variable must be set".
REQUIRED = environ.Env.NOTSET


class _Same:
    def __repr__(self) -> str:
        return "SAME"


#: ``Setting.production``: the production settings keep the local default.
SAME: Any = _Same()


def setting(name: str, cast: str = "str", default: object = REQUIRED) -> Any:
    """Read one variable, turning a malformed value into an error that names it."""
    try:
        value = getattr(env, cast)(name, default=default)
    except ImproperlyConfigured:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        raise ImproperlyConfigured(f"Invalid value for {name}: {exc}") from exc
    if cast == "db_url" and not value.get("ENGINE"):
        raise ImproperlyConfigured(f"Invalid value for {name}: not a database URL")
    return value


#: ``setting``'s signature: ``reader(name, cast, default=...)``.
Reader = Callable[..., Any]


@dataclass(frozen=True)
class Setting:
    """One variable: ``cast`` is a django-environ cast (``"int"``, ``"float"``, ``"json"``...);
    ``check`` returns the value to keep, or raises ``ValueError`` saying what is wrong.

    ``help`` is its line in docs/configuration.md; ``production`` its default under
    ``config.settings.production`` when that differs (``REQUIRED``: must be set there);
    ``read_by`` names who reads it when that is not the settings at start (``"production"``: the
    production settings only; else a command or a file, and it is only known and documented);
    ``shown_default`` is the default as the reference shows it, when it is computed.
    """

    name: str
    cast: str = "str"
    default: Any = ""
    check: Callable[[Any], Any] | None = None
    help: str = ""
    production: Any = SAME
    read_by: str = ""
    shown_default: str = ""

    def read(
        self, reader: Reader = setting, *, production: bool = False, default: Any = SAME
    ) -> Any:
        """The value from the environment (``default`` replaces the declared one; ``production``
        takes the production default)."""
        fallback = self.default if default is SAME else default
        if callable(fallback):  # computed from others: appconf.read gives it their values
            raise TypeError(f"{self.name}'s default is computed: read it with appconf.read")
        if production and self.production is not SAME:
            fallback = self.production
        value = reader(self.name, self.cast, default=fallback)
        if self.check is None:
            return value
        try:
            return self.check(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"Invalid value for {self.name}: {exc}") from exc

    @property
    def kind(self) -> str:
        """What the value is, in words (the check's ``kind`` if it has one)."""
        of_cast = CASTS.get(self.cast, self.cast)
        of_check = getattr(self.check, "kind", None)
        if of_check and self.cast in ("int", "float"):
            return f"{of_cast}, {of_check}"
        return of_check or of_cast


CASTS = {
    "str": "text",
    "int": "integer",
    "float": "number",
    "bool": "true or false",
    "list": "comma-separated list",
    "json": "JSON",
    "db_url": "database URL",
    "cache_url": "cache URL",
}


def read(settings: Iterable[Setting], reader: Reader = setting) -> dict[str, Any]:
    """The values of ``settings`` read at start, from the environment through ``reader``; a
    callable default is given the values read before it."""
    values: dict[str, Any] = {}
    for s in settings:
        if not s.read_by:
            default = s.default(values) if callable(s.default) else SAME
            values[s.name] = s.read(reader, default=default)
    return values


def read_production(settings: Iterable[Setting], reader: Reader = setting) -> dict[str, Any]:
    """The values ``config.settings.production`` reads again: those whose default differs
    there, and those only it reads."""
    return {
        s.name: s.read(reader, production=True)
        for s in settings
        if s.production is not SAME or s.read_by == "production"
    }


# --- the rules, each written once ------------------------------------------------------------


def _kind(text: str) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    def mark(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
        check.kind = text  # type: ignore[attr-defined]
        return check

    return mark


@_kind("auto, true or false")
def auto_true_false(value: str) -> str:
    """``auto``, ``true`` or ``false``, in any case: kept as that word."""
    word = value.lower()
    if word not in {"auto", "true", "false"}:
        raise ValueError(f"{word!r} (auto, true or false)")
    return word


@_kind("auto, true or false")
def auto_or_bool(value: str) -> str | bool:
    """``auto``, ``true`` or ``false``: ``"auto"``, or the boolean."""
    word = auto_true_false(value)
    return word if word == "auto" else word == "true"


@_kind("comma-separated addresses or networks (CIDR)")
def cidrs(values: list[str]) -> list[str]:
    """Addresses or networks (``10.0.0.0/8``, ``192.0.2.7``, ``2001:db8::/32``), each checked."""
    for cidr in values:
        ipaddress.ip_network(cidr.strip(), strict=False)
    return values


RATE_PERIODS = ("s", "sec", "m", "min", "h", "hour", "d", "day")


@_kind("a rate: N/s, N/min, N/hour, N/day, or none")
def rate(value: str) -> str | None:
    """A throttle rate such as ``1200/min`` (DRF's form), or ``none`` for no limit: None."""
    text = str(value).strip()
    if text.lower() == "none":
        return None
    count, _, period = text.partition("/")
    if not count.isdigit() or period not in RATE_PERIODS:
        raise ValueError(f"{text!r}, expected e.g. 1200/min, or none")
    return text


def one_of(*choices: str) -> Callable[[str], str]:
    """One of ``choices``, exactly (surrounding spaces ignored)."""

    @_kind(f"one of {', '.join(choices)}")
    def check(value: str) -> str:
        value = value.strip()
        if value not in choices:
            raise ValueError(f"{value!r}: expected one of {', '.join(choices)}")
        return value

    return check


def at_least(low: float, says: str = "") -> Callable[[Any], Any]:
    """A number of at least ``low`` (``says``: the message, else "at least <low>")."""

    @_kind(says or f"at least {low}")
    def check(value: Any) -> Any:
        if value < low:
            raise ValueError(says or f"at least {low}")
        return value

    return check


def within(low: float, high: float, says: str, *, above: bool = False) -> Callable[[Any], Any]:
    """A number from ``low`` (or above it, with ``above``) to below ``high``."""

    @_kind(says)
    def check(value: Any) -> Any:
        if not (low < value if above else low <= value) or not value < high:
            raise ValueError(says)
        return value

    return check


def price(high: float) -> Callable[[str], float | None]:
    """A price in dollars, 0 to below ``high``, or empty (None: the price table's)."""

    @_kind(f"dollars, 0 to {high:,g}, or empty")
    def check(text: str) -> float | None:
        text = text.strip()
        if not text:
            return None
        value = float(text)
        if not 0 <= value < high:
            raise ValueError(f"0 to {high:,g}")
        return value

    return check


def checked_by(path: str, kind: str) -> Callable[[Any], Any]:
    """A value that ``path`` (``"module.function"``, imported on first use: the tables it checks
    against load with it) accepts, raising ``ValueError`` otherwise; kept as given."""

    @_kind(kind)
    def check(value: Any) -> Any:
        module, _, name = path.rpartition(".")
        getattr(importlib.import_module(module), name)(value)
        return value

    return check


# --- every declaration, the known names, the reference ---------------------------------------


@dataclass(frozen=True)
class Declared:
    """One module's declarations: its app (``apps.efs``; ``core`` for apps/lib/conf.py), its
    title (its docstring's words before the first colon), its file, and its settings by section
    title (one untitled section unless it has ``SECTIONS``)."""

    app: str
    title: str
    path: str
    sections: tuple[tuple[str, tuple[Setting, ...]], ...]

    @property
    def settings(self) -> tuple[Setting, ...]:
        return tuple(s for _, group in self.sections for s in group)


def conf_of(module: str) -> Declared | None:
    """The declarations of the app ``module`` (a dotted path) if it is ours and has a conf.py."""
    if module.rpartition(".")[2][:1].isupper():  # an AppConfig path
        return None
    if not (ROOT / module.partition(".")[0]).is_dir():
        return None  # not ours: a third-party app's conf module is not this contract
    if importlib.util.find_spec(f"{module}.conf") is None:
        return None
    conf = importlib.import_module(f"{module}.conf")
    sections = getattr(conf, "SECTIONS", None) or (("", conf.SETTINGS),)
    path = str(Path(conf.__file__).resolve().relative_to(ROOT))
    app = "core" if module == "apps.lib" else module
    title = "Core" if app == "core" else (conf.__doc__ or app).partition(":")[0].strip()
    return Declared(app, title, path, tuple(sections))


def declared(apps: Iterable[str], *, core: bool = True) -> list[Declared]:
    """The core's declarations (unless not ``core``), then those of each app of ``apps`` that
    has a conf.py."""
    found = [conf_of(app) for app in (["apps.lib"] if core else []) + list(apps)]
    return [d for d in found if d is not None]


def vigils(apps: Iterable[str]) -> list[Declared]:
    """What docs/configuration.md lists: the core's and Vigil's own apps' (``apps.*``: not the
    tests' concern, which the test settings install)."""
    return declared(a for a in apps if a.startswith("apps."))


def known_names(declarations: Iterable[Declared]) -> set[str]:
    """Every declared ``VIGIL_*`` variable."""
    return {s.name for d in declarations for s in d.settings if s.name.startswith("VIGIL_")}


def check_unknown_variables(known: set[str], environ_: Mapping[str, str] = os.environ) -> None:
    """Fail on a VIGIL_* variable nobody reads: a typo must not silently keep a default."""
    known = known | {f"{name}_FILE" for name in known}
    unknown = sorted(k for k in environ_ if k.startswith("VIGIL_") and k not in known)
    if unknown:
        raise ImproperlyConfigured(
            f"Unknown setting {', '.join(unknown)}; known VIGIL_* settings are in .env.example"
        )


def shown(value: Any) -> str:
    """A default as the reference shows it."""
    if value is REQUIRED:
        return "required"
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, list | tuple):
        text = ",".join(map(str, value))
    elif isinstance(value, dict):
        text = json.dumps(value)
    else:
        text = str(value)
    return f"`{text}`" if text else "empty"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _prose(text: str) -> str:
    """A description as Markdown: variable names as code, the rest safe from HTML and
    emphasis."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("*", "\\*")
    return re.sub(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", lambda m: f"`{m[0]}`", text)


REFERENCE_FILE = "docs/configuration.md"
REFERENCE_COMMAND = "python manage.py settings_reference --write"


def reference(declarations: Iterable[Declared]) -> str:
    """docs/configuration.md: every declared variable with its type, default and meaning."""
    out = [
        "# Configuration",
        "",
        "<!-- Generated from the settings declarations (apps/lib/conf.py and each app's conf.py,",
        f"     apps/lib/appconf.py): do not edit. Regenerate with `{REFERENCE_COMMAND}`. -->",
        "",
        "Every setting is an environment variable; any of them may instead be given as",
        "`NAME_FILE` naming a file that holds the value (Docker or Kubernetes secrets). A",
        "malformed value, or a `VIGIL_*` variable none of these declares (a typo), stops the",
        "start with a message naming it. `.env.example` at the top of the repository has each",
        "with an example value; this page lists them all, generated from their declarations.",
        "",
        "What a setting does is told at length where its subject is:",
        "[Getting started](getting-started.md) (demo mode, the admin, the broker), each concern's",
        "page ([EFS](efs.md), [EBS](ebs.md), [Galera](galera.md), [md-RAID](raid.md),",
        "[HTTP keep-alive probes](probes.md)), [Alerts and channels](alerts.md),",
        "[API and metrics](api.md), [Roles and sign-in](sign-in.md), [Security](security.md),",
        "[History and retention](retention.md) and [Production and scaling](production.md).",
        "",
    ]
    for d in declarations:
        out += [f"## {d.title}", "", f"Declared in `{d.path}`.", ""]
        for section, group in d.sections:
            if section:
                out += [f"### {section}", ""]
            out += [
                "| Variable | Type | Default | Production | Description |",
                "|---|---|---|---|---|",
            ]
            for s in group:
                default = s.shown_default or shown(s.default)
                production = "same" if s.production is SAME else shown(s.production)
                description = s.help
                if s.read_by and s.read_by != "production":
                    description = f"{description} (Read by {s.read_by} only.)".strip()
                if s.read_by == "production":
                    default, production = "not read", default
                cells = [f"`{s.name}`", s.kind, default, production, _prose(description)]
                out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"
