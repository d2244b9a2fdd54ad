from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from apps.alerts.models import Rule

pytestmark = pytest.mark.django_db


def test_it_creates_the_first_admin_once_and_routes_alerts_to_them(monkeypatch):
    monkeypatch.setenv("VIGIL_ADMIN_PASSWORD", "from-the-environment")
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    assert "username: admin" in out.getvalue() and "from-the-environment" not in out.getvalue()
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password("from-the-environment")
    assert list(admin.groups.values_list("name", flat=True)) == ["Admin"]
    channels = Rule.objects.get(is_default=True).channels.all()
    assert [c.target for c in channels] == ["admin@localhost"]

    again = io.StringIO()
    call_command("ensure_admin", stdout=again)
    assert again.getvalue() == ""


def test_it_prints_a_generated_password_once(monkeypatch):
    monkeypatch.delenv("VIGIL_ADMIN_PASSWORD", raising=False)
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    password = out.getvalue().split("password: ")[1].split()[0]
    assert get_user_model().objects.get(username="admin").check_password(password)
