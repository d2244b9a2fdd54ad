"""Push tokens: a secret per pushing subject (a RAID host, a Galera node), shown once.

A token is ``<prefix><lookup><secret>``: the prefix names its kind (``vgh_`` a RAID host,
``vgn_`` a Galera node), the 8-character lookup finds the row, and only a SHA-256 digest of
the whole token is stored. Issuing a new token replaces the old one at once.

``PushTokenHolder`` is the abstract model with the two columns and the methods;
``PushTokenAuthentication`` is the DRF class that turns ``Authorization: Bearer <token>`` into
``request.auth = PushToken(subject)``, for one model and its prefix.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any, ClassVar

from django.contrib.auth.models import AnonymousUser
from django.db import models
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

LOOKUP_LENGTH = 8


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class PushTokenHolder(models.Model):
    """A model that may push with a token of its own; ``token_prefix`` names the kind."""

    token_prefix: ClassVar[str] = ""

    token_lookup = models.CharField(
        max_length=LOOKUP_LENGTH, unique=True, null=True, blank=True, editable=False
    )
    token_hash = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        abstract = True

    @property
    def token_hint(self) -> str:
        """What may be shown of the token: its prefix and lookup part, never the secret."""
        return f"{self.token_prefix}{self.token_lookup}…" if self.token_lookup else ""

    def issue_token(self) -> str:
        """A new push token (the old one stops working); the raw token is never stored."""
        model = type(self)
        while True:
            lookup = secrets.token_hex(LOOKUP_LENGTH // 2)
            if not model._default_manager.filter(token_lookup=lookup).exists():
                break
        raw = f"{self.token_prefix}{lookup}{secrets.token_urlsafe(30)}"
        self.token_lookup, self.token_hash = lookup, digest(raw)
        self.save(update_fields=["token_lookup", "token_hash"])  # a save: the audit trail sees it
        return raw

    def token_matches(self, raw: str) -> bool:
        if not self.token_hash or not raw.startswith(self.token_prefix):
            return False
        return hmac.compare_digest(self.token_hash, digest(raw))

    @classmethod
    def holder_of(cls, raw: str) -> Any | None:
        """The row whose token ``raw`` is, or None."""
        if not raw.startswith(cls.token_prefix):
            return None
        lookup = raw[len(cls.token_prefix) : len(cls.token_prefix) + LOOKUP_LENGTH]
        if len(lookup) != LOOKUP_LENGTH:
            return None
        holder = cls._default_manager.filter(token_lookup=lookup).first()
        return holder if holder is not None and holder.token_matches(raw) else None


@dataclass(frozen=True)
class PushToken:
    """``request.auth`` for a request signed with a subject's push token."""

    subject: Any


class PushTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer <prefix>…``: a token that may only push for its own subject.

    Subclasses set ``model`` (a ``PushTokenHolder``); other bearer tokens are left to the
    next authentication class (API keys).
    """

    model: ClassVar[type[PushTokenHolder]]
    refused = "Invalid or replaced push token"

    def authenticate(self, request: Request) -> tuple[Any, PushToken] | None:
        parts = request.headers.get("Authorization", "").split()
        prefix = self.model.token_prefix
        if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].startswith(prefix):
            return None
        holder = self.model.holder_of(parts[1])
        if holder is None:
            raise exceptions.AuthenticationFailed(self.refused)
        return AnonymousUser(), PushToken(holder)

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
