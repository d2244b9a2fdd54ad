"""What the accounts tell the apps above them, which they cannot import (docs/architecture.md,
"Imports point down")."""

from __future__ import annotations

from django.dispatch import Signal

#: Sent by ``ensure_admin`` when it made the first admin, with ``user`` and ``email``: the
#: alerts app routes the default rule to that address (apps/alerts/receivers.py).
first_admin_created = Signal()
