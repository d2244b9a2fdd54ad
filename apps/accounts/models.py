"""API keys, after healthchecks' ``Project.for_api_key``.

A key is shown once when issued and stored only as a SHA-256 digest (keys are long random
tokens, so a slow password hash buys nothing). Its first characters say what it may do:
``vgr_`` read-only, ``vgw_`` read-write; the next 8 characters are a lookup prefix kept in
clear so a key is found with one indexed query and then compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

READ_ONLY_PREFIX = "vgr_"
READ_WRITE_PREFIX = "vgw_"
LOOKUP_LENGTH = 8


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
        """Create a key and return it with the raw key, which is never available again."""
        kind = READ_ONLY_PREFIX if read_only else READ_WRITE_PREFIX
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
        """The active key matching ``raw``, or None."""
        if raw[:4] not in (READ_ONLY_PREFIX, READ_WRITE_PREFIX) or len(raw) <= 4 + LOOKUP_LENGTH:
            return None
        key = (
            cls.objects.select_related("user")
            .filter(lookup=raw[4 : 4 + LOOKUP_LENGTH], revoked=None)
            .first()
        )
        if key is None or not hmac.compare_digest(key.hashed, _digest(raw)):
            return None
        if not key.user.is_active:
            return None
        return key

    def touch(self) -> None:
        """Record use, at most once a minute, so reads do not turn into a write each."""
        now = timezone.now()
        if self.last_used is None or now - self.last_used > timedelta(minutes=1):
            ApiKey.objects.filter(pk=self.pk).update(last_used=now)
            self.last_used = now

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])
