"""Demo mode: the gadgets have no demo subjects (idempotent, as every demo hook must be)."""

from __future__ import annotations


def set_up() -> None:
    return None
