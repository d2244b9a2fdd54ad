"""The default rule is always there: made by its data migration, and again after a flush (as
Django's transactional tests and ``manage.py flush`` do), as the role groups are."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from apps.accounts.roles import GROUPS
from apps.alerts.models import Rule
from apps.alerts.receivers import DEFAULT_RULE


@pytest.mark.django_db(transaction=True)
def test_a_flush_leaves_the_default_rule_and_the_role_groups():
    call_command("flush", interactive=False, verbosity=0)

    (rule,) = Rule.objects.filter(is_default=True)
    assert (rule.name, rule.min_severity) == (DEFAULT_RULE["name"], DEFAULT_RULE["min_severity"])
    assert set(Group.objects.values_list("name", flat=True)) >= set(GROUPS.values())
