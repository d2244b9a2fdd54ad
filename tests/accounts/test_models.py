from __future__ import annotations

import pytest

from apps.accounts.models import ApiKey

pytestmark = pytest.mark.django_db


def test_it_stores_only_a_digest_of_the_key(user):
    key, raw = ApiKey.issue(user, "backup script", read_only=True)
    assert raw.startswith("vgr_" + key.lookup)
    assert raw not in (key.hashed, key.lookup) and len(key.hashed) == 64
    assert ApiKey.for_raw_key(raw) == key


def test_it_marks_read_write_keys_by_their_prefix(user):
    key, raw = ApiKey.issue(user, "deploy", read_only=False)
    assert raw.startswith("vgw_") and key.display_prefix == raw[:12]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: r[:-1] + ("A" if r[-1] != "A" else "B"),
        lambda r: "vgw_" + r[4:],
        lambda r: r[:12],
        lambda r: "",
    ],
)
def test_it_rejects_a_key_that_is_not_exactly_the_issued_one(user, tamper):
    _, raw = ApiKey.issue(user, "ci", read_only=True)
    assert ApiKey.for_raw_key(tamper(raw)) is None


def test_it_rejects_a_revoked_key(user):
    key, raw = ApiKey.issue(user, "ci", read_only=True)
    key.revoke()
    assert ApiKey.for_raw_key(raw) is None


def test_it_rejects_the_key_of_a_deactivated_user(user):
    _, raw = ApiKey.issue(user, "ci", read_only=True)
    user.is_active = False
    user.save()
    assert ApiKey.for_raw_key(raw) is None
