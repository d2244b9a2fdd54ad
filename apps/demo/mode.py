"""Whether Vigil runs in demo mode, and the demo account it watches."""

from __future__ import annotations

from functools import cache

import botocore.session
from django.conf import settings

DEMO_ACCOUNT_NAME = "Demo account"


def has_configured_credentials() -> bool:
    """Whether boto3's chain finds credentials, without asking the instance metadata service.

    Only environment variables, shared config/credential files, SSO and processes are looked
    at: probing 169.254.169.254 off EC2 hangs or leaves the machine. On EC2 or ECS with an
    instance or task role, set VIGIL_DEMO=false.
    """
    session = botocore.session.get_session()
    resolver = session.get_component("credential_provider")
    for name in ("iam-role", "container-role"):
        resolver.remove(name)
    return resolver.load_credentials() is not None


@cache
def demo_enabled() -> bool:
    if settings.VIGIL_DEMO == "auto":
        return not has_configured_credentials()
    return settings.VIGIL_DEMO == "true"


def ensure_demo_account(enabled: bool) -> None:
    """Create the demo account in demo mode; hide it (keeping its history) otherwise."""
    from apps.regions.models import Account

    if enabled:
        account = Account.objects.filter(is_demo=True).first()
        if account is None:
            Account.objects.create(name=DEMO_ACCOUNT_NAME, is_demo=True, home_region="us-east-1")
        elif not account.enabled:
            Account.objects.filter(pk=account.pk).update(enabled=True)
    else:
        Account.objects.filter(is_demo=True).update(enabled=False)


def set_up_demo_fleet() -> None:
    """Let each concern add its demo subjects to the demo account's regions (idempotent)."""
    from apps.regions import concerns

    for concern in concerns.registered():
        if concern.demo_setup is not None:
            concern.demo_setup()


def demo_site(code: str, name: str):
    """A named site for a concern's demo subjects, owned by the demo account.

    Owned sites are shown and collected only while their account is enabled, so leaving demo
    mode hides the demo sites with the demo account, history kept.
    """
    from apps.regions.models import Account, Region

    ensure_demo_account(True)
    account = Account.objects.get(is_demo=True)
    region, _ = Region.objects.update_or_create(
        account=account, code=code, defaults={"kind": Region.Kind.SITE, "name": name}
    )
    return region
