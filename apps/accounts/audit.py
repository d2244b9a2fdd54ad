"""The audit trail: who changed which configuration, when, from where, and what it was before.

django-auditlog records every create, update and delete of the models registered with
``track`` through the ORM's signals, so pages, API, admin and commands are recorded alike; what
workers write while they monitor is excluded per field or written with ``QuerySet.update()``.
Who: the session's user (``AuditMiddleware``) or an API key's owner (``attribute_to``); from
where: ``client_ip``; ``secrets`` are stored as ``MASK``, ``urls`` as their scheme and host
(``shown_url``); sign-ins are "access" entries (``record_sign_in``). What admins see:
docs/sign-in.md, "The audit trail".
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from auditlog.context import auditlog_value
from auditlog.middleware import AuditlogMiddleware
from auditlog.models import LogEntry
from auditlog.registry import auditlog
from auditlog.signals import post_log
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.db.models.signals import pre_save
from django.http import HttpRequest

from apps.lib.clientip import client_ip

MASK = "(hidden)"
#: Fields every monitored subject has, written by workers (the status contract).
SUBJECT_FIELDS = ("status", "reason", "status_changed", "lease_until")


def mask(value: str) -> str:
    """``AUDITLOG_MASK_CALLABLE``: that a secret is set, or empty, never any of it."""
    return value if value in ("", "None") else MASK


def shown_url(value: str) -> str:
    """An http(s) URL as it may be shown: its scheme and host (with the port), and ``/…`` for
    whatever followed (a path, a query: a webhook's credential); any other value unchanged."""
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018  (raises ValueError for a port that is not one)
    except ValueError:
        return value
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return value
    host = parts.netloc.rpartition("@")[2]  # never user:password@
    rest = "/…" if parts.path.strip("/") or parts.query or parts.fragment else ""
    return f"{parts.scheme.lower()}://{host}{rest}"


def _shown_urls(fields: frozenset[str]) -> Any:
    """A ``post_log`` receiver: the entry's values of ``fields`` as ``shown_url`` shows them."""

    def receiver(sender: type[Model], log_entry: Any = None, **kwargs: Any) -> None:
        changes = getattr(log_entry, "changes", None)
        if not isinstance(changes, dict) or not fields & changes.keys():
            return
        for name in fields & changes.keys():
            changes[name] = [shown_url(v) if isinstance(v, str) else v for v in changes[name]]
        type(log_entry).objects.filter(pk=log_entry.pk).update(changes=changes)

    return receiver


def track(
    model: type[Model],
    *,
    exclude: Iterable[str] = (),
    secrets: Iterable[str] = (),
    m2m: Iterable[str] = (),
    urls: Iterable[str] = (),
) -> None:
    """Record creates, updates and deletes of ``model`` in the audit trail.

    ``exclude``: fields workers write (a change to only those is not recorded);
    ``secrets``: fields recorded as changed but masked; ``m2m``: many-to-many fields;
    ``urls``: fields whose URLs are recorded with their scheme and host only.

    Only the model's own columns are recorded (auditlog would list a new object's reverse
    relations too, as "api_keys accounts.ApiKey.None"), and each value is first put in its
    field's type, so that saving 15 where 15.0 was (a demo's set-up at every start) is no
    change.
    """
    excluded = set(exclude)
    columns = [f.name for f in model._meta.concrete_fields if f.name not in excluded]
    # Connected before auditlog's own pre_save receiver (in register()), so it runs first.
    pre_save.connect(_as_stored, sender=model, dispatch_uid=f"vigil-audit-{model._meta.label}")
    auditlog.register(
        model,
        include_fields=columns,
        exclude_fields=list(exclude),
        mask_fields=list(secrets),
        m2m_fields=set(m2m),
    )
    if urls:
        post_log.connect(
            _shown_urls(frozenset(urls)),
            sender=model,
            weak=False,
            dispatch_uid=f"vigil-audit-urls-{model._meta.label}",
        )


def _as_stored(sender: type[Model], instance: Model, **kwargs: Any) -> None:
    """Each plain column's value in its field's Python type (15 -> 15.0 for a float), as the
    database will give it back; a value the field cannot take is left to validation."""
    for field in sender._meta.concrete_fields:
        if field.is_relation:
            continue
        value = getattr(instance, field.attname)
        if value is None:
            continue
        with contextlib.suppress(ValidationError):
            setattr(instance, field.attname, field.to_python(value))


def attribute_to(user: Any, via: str | None = None) -> None:
    """Record the changes of the rest of this request as ``user``'s (``via``: an API key)."""
    context = auditlog_value.get(None)
    if context is None:
        return
    context["actor"] = user
    if via:
        context["additional_data"] = {"via": via}


def _address(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.split("%", 1)[0]))
    except ValueError:
        return None


def changes(entry: Any) -> list[tuple[str, str, str]]:
    """An entry's changes as (field, before, after) for people; many-to-many as added/removed."""
    rows = []
    for field, value in (entry.changes_dict or {}).items():
        if isinstance(value, dict) and value.get("type") == "m2m":
            added = value.get("operation") == "add"
            names = ", ".join(str(o) for o in value.get("objects", []))
            rows.append((field, "" if added else names, names if added else f"(removed) {names}"))
        elif isinstance(value, list | tuple) and len(value) == 2:
            rows.append((field, _shown(value[0]), _shown(value[1])))
    return rows


def _shown(value: object) -> str:
    return "" if value in (None, "None") else str(value)


#: The most characters of a typed username kept in the trail.
USERNAME_SHOWN = 150


def record_sign_in(
    request: HttpRequest | None,
    event: str,
    *,
    user: Any = None,
    username: str = "",
    method: str = "",
    **details: object,
) -> LogEntry:
    """An "access" entry: ``event`` ("signed in", "sign-in failed", "refused", "signed out",
    "role from groups") by ``user`` (or a ``username`` that names nobody), with ``method`` and
    ``details`` (for example ``role=("operator", "viewer")``: before and after)."""
    changes: dict[str, list[object]] = {"event": [None, event]}
    if method:
        changes["method"] = [None, method]
    for name, value in details.items():
        before, after = value if isinstance(value, tuple) else (None, value)
        changes[name] = [before, after]
    name = user.get_username() if user is not None else username[:USERNAME_SHOWN]
    return LogEntry.objects.create(
        content_type=ContentType.objects.get_for_model(get_user_model()),
        object_pk=str(user.pk) if user is not None else "",
        object_id=user.pk if user is not None else None,
        object_repr=name,
        action=LogEntry.Action.ACCESS,
        changes=changes,
        actor=user if user is not None and user.pk else None,
        remote_addr=AuditMiddleware._get_remote_addr(request) if request is not None else None,
    )


class AuditMiddleware(AuditlogMiddleware):
    """django-auditlog's middleware, with the client's address as Vigil counts it."""

    @staticmethod
    def _get_remote_addr(request: HttpRequest) -> str | None:
        return _address(client_ip(request))

    @staticmethod
    def _get_remote_port(request: HttpRequest) -> int | None:
        return None  # X-Forwarded-Port is the client's word, as X-Forwarded-For is
