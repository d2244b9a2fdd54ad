"""API keys, after healthchecks' ``Project.for_api_key``.

A key is shown once when issued and stored only as a SHA-256 digest (keys are long random
tokens, so a slow password hash buys nothing). Its first characters say what it may do:
``vgr_`` read-only, ``vgw_`` read-write; the next 8 characters are a lookup prefix kept in
clear so a key is found with one indexed query and then compared in constant time.

A key never carries more than its owner's role: requests made with it are checked against the
owner's permissions as they are at that moment. A viewer may only hold read-only keys, and
nobody more than ``VIGIL_API_KEYS_PER_USER`` live ones (counted under a lock of the user's row,
so parallel requests cannot pass the limit together).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.utils import timezone

from . import keycache
from .audit import track
from .roles import VIEWER, group_names, role_of

READ_ONLY_PREFIX = "vgr_"
READ_WRITE_PREFIX = "vgw_"
LOOKUP_LENGTH = 8


class KeyRefused(ValueError):
    """A key that may not be issued; the message says why, for the page and the API."""


def _digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


class ApiKey(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    read_only = models.BooleanField(default=True)
    lookup = models.CharField(max_length=LOOKUP_LENGTH, unique=True, editable=False)
    hashed = models.CharField(max_length=64, editable=False)
    created = models.DateTimeField(default=timezone.now, editable=False)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.display_prefix}… {self.name}"

    @property
    def kind_prefix(self) -> str:
        return READ_ONLY_PREFIX if self.read_only else READ_WRITE_PREFIX

    @property
    def display_prefix(self) -> str:
        """What may be shown of the key: its kind and lookup part, never the secret."""
        return f"{self.kind_prefix}{self.lookup}"

    @property
    def is_active(self) -> bool:
        return self.revoked is None

    @classmethod
    def issue(
        cls, user: settings.AUTH_USER_MODEL, name: str, *, read_only: bool
    ) -> tuple[ApiKey, str]:
        """Create a key and return it with the raw key, which is never available again.

        Raises ``KeyRefused`` for a read-write key of a viewer, or past the per-user limit.
        """
        if not read_only and role_of(user) == VIEWER:
            raise KeyRefused(
                "A viewer's keys are read-only: ask an admin for the operator or admin role."
            )
        limit = settings.VIGIL_API_KEYS_PER_USER
        kind = READ_ONLY_PREFIX if read_only else READ_WRITE_PREFIX
        with transaction.atomic():
            # The count and the insert under the user's row lock: parallel requests of one
            # user queue here, so none of them counts before another's key is in.
            get_user_model()._base_manager.select_for_update().filter(pk=user.pk).first()
            if cls.objects.filter(user=user, revoked=None).count() >= limit:
                raise KeyRefused(
                    f"You have {limit} live API keys, the most one user may hold "
                    "(VIGIL_API_KEYS_PER_USER): revoke one first."
                )
            while True:
                lookup = secrets.token_hex(LOOKUP_LENGTH // 2)
                if not cls.objects.filter(lookup=lookup).exists():
                    break
            raw = f"{kind}{lookup}{secrets.token_urlsafe(30)}"
            key = cls.objects.create(
                user=user, name=name, read_only=read_only, lookup=lookup, hashed=_digest(raw)
            )
        return key, raw

    @classmethod
    def for_raw_key(cls, raw: str) -> ApiKey | None:
        """The active key matching ``raw``, or None.

        The key with its owner and the owner's groups (their role) is kept in the cache for
        ``VIGIL_API_KEY_CACHE_SECONDS`` under its lookup part (``keycache``): a request then
        reads no row to know who calls. Revoking the key, or changing its owner (deactivated,
        a group given or taken), puts a tombstone there first, which no request overwrites,
        so it takes effect at the very next request."""
        return cls.find(raw)[0]

    @classmethod
    def find(cls, raw: str, *, here: bool = False) -> tuple[ApiKey | None, bool]:
        """``for_raw_key``, and whether the key came from this process's memory: only when
        ``here`` is asked, by a caller that checks the shared entry (``keycache.holds``)
        before the request does anything with it."""
        if raw[:4] not in (READ_ONLY_PREFIX, READ_WRITE_PREFIX) or len(raw) <= 4 + LOOKUP_LENGTH:
            return None, False
        lookup = raw[4 : 4 + LOOKUP_LENGTH]
        key = keycache.here(lookup) if here else None
        from_here = key is not None
        if key is None:
            key = keycache.get(lookup)
        if key is None:
            key = cls.objects.select_related("user").filter(lookup=lookup, revoked=None).first()
            if key is not None:
                group_names(key.user)  # read now, kept with the key
                key.touch()  # kept touched: a cached key asks nothing more for a minute
                keycache.keep(key)
        if key is None or not key.opens(raw):
            return None, False
        return key, from_here

    def opens(self, raw: str) -> bool:
        """Whether ``raw`` is this key (compared in constant time) and its owner is active."""
        return hmac.compare_digest(self.hashed, _digest(raw)) and self.user.is_active

    def touch(self) -> None:
        """Record use, at most once a minute, so reads do not turn into a write each (a key
        read from the cache asks the cache whether another request wrote it this minute)."""
        now = timezone.now()
        if self.last_used is None or now - self.last_used > timedelta(minutes=1):
            if keycache.first_touch(self.pk):
                ApiKey.objects.filter(pk=self.pk).update(last_used=now)
            self.last_used = now

    def revoke(self) -> None:
        if self.revoked is None:
            keycache.forget([self.lookup])
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])
            keycache.forget([self.lookup])


track(ApiKey, exclude=["last_used"], secrets=["hashed"])


class Preference(models.Model):
    """A person's own display settings: colour scheme and time zone (not configuration)."""

    class Theme(models.TextChoices):
        AUTO = "auto", "Follow the system"
        LIGHT = "light", "Light"
        DARK = "dark", "Dark"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, models.CASCADE, related_name="vigil_preference"
    )
    theme = models.CharField(max_length=5, choices=Theme.choices, default=Theme.AUTO)
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        help_text="An IANA zone such as Europe/Berlin; empty: the browser's.",
    )

    def __str__(self) -> str:
        return f"{self.user}: {self.theme}, {self.time_zone or 'browser time zone'}"

    SESSION_KEY = "vigil_preference"

    @classmethod
    def of_request(cls, request: object) -> tuple[str, str]:
        """(theme, time zone) of the request's user, read once per session and kept in it."""
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return cls.Theme.AUTO.value, ""
        session = getattr(request, "session", None)
        kept = session.get(cls.SESSION_KEY) if session is not None else None
        if not (isinstance(kept, list) and len(kept) == 2):
            found = cls.objects.filter(user=user).values_list("theme", "time_zone").first()
            kept = list(found or (cls.Theme.AUTO.value, ""))
            if session is not None:
                session[cls.SESSION_KEY] = kept
        return kept[0], kept[1]

    def remember(self, request: object) -> None:
        """Save, and update the session's copy (other sessions read it on their next login)."""
        self.save()
        request.session[self.SESSION_KEY] = [self.theme, self.time_zone]  # type: ignore[attr-defined]
