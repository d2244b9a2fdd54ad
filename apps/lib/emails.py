"""Render an email from three templates, as healthchecks' hc/lib/emails.py does.

``emails/<name>-subject.txt``, ``emails/<name>-body-text.txt`` and ``emails/<name>-body-html.html``
become one message with a text and an HTML part. Sending goes through Django's mail API, so
the backend (Amazon SES through django-anymail in production, locmem in tests) is a setting.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string


def make_message(name: str, to: list[str], ctx: dict[str, Any]) -> EmailMultiAlternatives:
    subject = " ".join(render_to_string(f"emails/{name}-subject.txt", ctx).split())
    text = render_to_string(f"emails/{name}-body-text.txt", ctx)
    html = render_to_string(f"emails/{name}-body-html.html", ctx)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, to)
    message.attach_alternative(html, "text/html")
    return message
