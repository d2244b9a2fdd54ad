from __future__ import annotations

import pytest

from apps.accounts.models import ApiKey
from apps.regions.models import Account
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def test_it_answers_401_in_json_without_a_key(api_client):
    response = api_client.get("/api/regions/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert "error" in response.json()


def test_it_answers_401_for_an_unknown_key(api_client):
    response = api_client.get("/api/regions/", **bearer("vgr_deadbeefnotakey"))
    assert response.status_code == 401
    assert response.json() == {"error": "Invalid or revoked API key"}


def test_it_lets_a_read_only_key_read(api_client, api_key):
    response = api_client.get("/api/accounts/", **bearer(api_key(read_only=True)))
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_it_accepts_the_key_in_an_x_api_key_header(api_client, api_key):
    response = api_client.get("/api/regions/", HTTP_X_API_KEY=api_key(read_only=True))
    assert response.status_code == 200


def test_it_refuses_writes_with_a_read_only_key(api_client, api_key):
    response = api_client.post(
        "/api/accounts/", {"name": "prod"}, format="json", **bearer(api_key(read_only=True))
    )
    assert response.status_code == 403
    assert response.json() == {"error": "This API key is read-only"}
    assert not Account.objects.exists()


def test_it_lets_a_read_write_key_add_an_account_and_never_returns_the_external_id(
    api_client, api_key
):
    raw = api_key(read_only=False)
    response = api_client.post(
        "/api/accounts/",
        {
            "name": "prod",
            "role_arn": "arn:aws:iam::123456789012:role/vigil",
            "external_id": "s3cr3t-external",
        },
        format="json",
        **bearer(raw),
    )
    assert response.status_code == 201, response.json()
    assert "external_id" not in response.json()
    listing = api_client.get("/api/accounts/", **bearer(raw))
    assert "s3cr3t-external" not in listing.content.decode()
    assert Account.objects.get().external_id == "s3cr3t-external"


def test_it_reports_invalid_input_as_json(api_client, api_key):
    response = api_client.post(
        "/api/accounts/",
        {"name": "x", "role_arn": "not-an-arn"},
        format="json",
        **bearer(api_key(read_only=False)),
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Invalid input" and "role_arn" in body["fields"]


def test_it_shows_a_new_api_key_once_and_revokes_it(api_client, api_key):
    raw = api_key(read_only=False)
    created = api_client.post(
        "/api/keys/", {"name": "nightly", "read_only": True}, format="json", **bearer(raw)
    ).json()
    assert created["key"].startswith("vgr_") and created["prefix"] == created["key"][:12]
    listed = api_client.get(f"/api/keys/{created['id']}/", **bearer(raw)).json()
    assert listed["key"] is None
    assert api_client.delete(f"/api/keys/{created['id']}/", **bearer(raw)).status_code == 204
    assert ApiKey.objects.get(pk=created["id"]).revoked is not None
    assert api_client.get("/api/regions/", **bearer(created["key"])).status_code == 401


@pytest.mark.parametrize("debug", [False, True])
def test_it_answers_json_404_for_unknown_api_paths(logged_in_client, settings, debug):
    settings.DEBUG = debug  # make run serves with DEBUG on: not Django's 40 KB URL list
    response = logged_in_client.get("/api/no-such-thing/")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found (the API's paths: /api/docs/)"}


def test_it_publishes_the_openapi_schema_and_docs(logged_in_client):
    schema = logged_in_client.get("/api/schema/?format=json").json()
    assert {"/api/accounts/", "/api/regions/", "/api/keys/"} <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
    docs = logged_in_client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
    assert b'<nav class="back-to-vigil" aria-label="Vigil"><a href="/">Vigil</a>' in docs.content
