from __future__ import annotations

import pytest

from apps.accounts.models import ApiKey

pytestmark = pytest.mark.django_db


def test_it_shows_a_new_key_once(logged_in_client, user):
    page = logged_in_client.post(
        "/accounts/keys/", {"name": "grafana", "read_only": "1"}
    ).content.decode()
    key = ApiKey.objects.get(user=user)
    shown = page.split('id="new-key">')[1].split("<")[0]
    assert ApiKey.for_raw_key(shown) == key
    again = logged_in_client.get("/accounts/keys/").content.decode()
    assert shown not in again and key.display_prefix in again


def test_it_revokes_a_key_from_the_page(logged_in_client, user):
    key, _ = ApiKey.issue(user, "old", read_only=True)
    response = logged_in_client.post(f"/accounts/keys/{key.pk}/revoke/")
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked is not None


def test_it_does_not_let_a_user_revoke_someone_elses_key(logged_in_client, django_user_model):
    other = django_user_model.objects.create_user("other", password="x" * 12)
    key, _ = ApiKey.issue(other, "theirs", read_only=True)
    assert logged_in_client.post(f"/accounts/keys/{key.pk}/revoke/").status_code == 404
