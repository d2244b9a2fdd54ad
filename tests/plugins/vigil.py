"""Vigil's own objects most tests start from: users of each role and a logged-in client, API
clients and keys, the API's OpenAPI schema, a site outside AWS, and demo mode read afresh for
every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.accounts.models import ApiKey
from apps.demo.mode import demo_enabled
from apps.regions.models import Region
from tests.helpers import ADMIN_PASSWORD, bearer, make_user


@pytest.fixture(autouse=True)
def _fresh_demo_mode() -> Iterator[None]:
    demo_enabled.cache_clear()
    yield
    demo_enabled.cache_clear()


@pytest.fixture
def user(django_user_model):
    """The on-call engineer most tests act as: an admin (in the Admin group, not a superuser),
    since most tests exercise what Vigil does, not who may do it (tests/accounts/test_roles.py
    and the URL-conf walk in tests/test_security.py do that, with ``viewer`` and ``operator``)."""
    return make_user(django_user_model, "oncall", "admin")


@pytest.fixture
def viewer(django_user_model):
    """A user with no group and no staff flag: a viewer."""
    return make_user(django_user_model, "viewer", None)


@pytest.fixture
def operator(django_user_model):
    return make_user(django_user_model, "operator", "operator")


@pytest.fixture
def logged_in_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def admin(django_user_model):
    """A superuser, as the browser tests log in (``log_in``, password ``ADMIN_PASSWORD``)."""
    return django_user_model.objects.create_superuser("admin", "admin@example.com", ADMIN_PASSWORD)


@pytest.fixture
def site(db):
    """A site outside AWS, where most concerns' subjects live in the tests."""
    return Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def api_key(user):
    """``api_key(read_only=True)`` → the raw key of a fresh key for ``user``."""

    def issue(read_only: bool = True) -> str:
        return ApiKey.issue(user, "test key", read_only=read_only)[1]

    return issue


@pytest.fixture
def writer(api_client, api_key):
    """An API client holding a fresh read-write key of ``user``."""
    api_client.credentials(**bearer(api_key(read_only=False)))
    return api_client


@pytest.fixture(scope="session")
def api_schema() -> dict:
    """The API's OpenAPI schema as ``/api/schema/`` serves it, generated once per worker for the
    tests that read what it documents (about 0.2 s of CPU each time, 0.7 s the first);
    ``tests/accounts/test_api.py`` fetches the served one, with its login."""
    from drf_spectacular.generators import SchemaGenerator  # loads with the first test using it

    return SchemaGenerator().get_schema(request=None, public=True)
