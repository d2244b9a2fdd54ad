"""The account admin: the external id is written, never shown again."""

from __future__ import annotations

import pytest

from apps.regions.models import Account

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.com", "pw"))
    return client


def form(**changes: str) -> dict[str, str]:
    return {
        "name": "prod",
        "role_arn": "arn:aws:iam::123456789012:role/vigil",
        "external_id": "",
        "home_region": "us-east-1",
        "enabled": "on",
        **changes,
    }


def test_it_never_shows_the_external_id_and_keeps_it_when_left_empty(admin_client):
    account = Account.objects.create(name="prod", external_id="ext-7f3a-secret")
    url = f"/admin/regions/account/{account.pk}/change/"
    assert "ext-7f3a-secret" not in admin_client.get(url).content.decode()
    assert admin_client.post(url, form(home_region="eu-west-1")).status_code == 302
    account.refresh_from_db()
    assert (account.external_id, account.home_region) == ("ext-7f3a-secret", "eu-west-1")


def test_it_replaces_or_clears_the_external_id(admin_client):
    account = Account.objects.create(name="prod", external_id="old-id")
    url = f"/admin/regions/account/{account.pk}/change/"
    admin_client.post(url, form(external_id="new-id"))
    account.refresh_from_db()
    assert account.external_id == "new-id"
    admin_client.post(url, form(clear_external_id="on"))
    account.refresh_from_db()
    assert account.external_id == ""


def test_it_takes_an_external_id_for_a_new_account(admin_client):
    response = admin_client.post("/admin/regions/account/add/", form(external_id="first-id"))
    assert response.status_code == 302
    assert Account.objects.get(name="prod").external_id == "first-id"
