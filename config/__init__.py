"""Vigil's project package: settings, URLs, the API router and the Celery app."""

from __future__ import annotations

from .celery_app import app as celery_app

__all__ = ["celery_app"]
