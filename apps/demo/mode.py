"""Whether Vigil runs in demo mode (``VIGIL_DEMO``: ``auto`` means "no AWS credentials found"),
and the demo account that it then watches, its regions and its fleet. No production module asks
it: the demo app tells them through their hooks (``apps.py``)."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from apps.regions import concerns
from apps.regions.models import Account, Region

DEMO_ACCOUNT_NAME = "Demo account"
#: The demo AWS region that holds the full picture: EFS beside a Galera cluster, the seed's RAID
#: host and keep-alive probes of the local demo servers, on one region page.
DEMO_REGION = "eu-west-1"
#: The one place outside AWS in the demo, to show that sites exist.
OUTSIDE_SITE_CODE = "demo-site"
OUTSIDE_SITE_NAME = "Demo site: on-premises (outside AWS)"
#: Sites of earlier versions' demo, removed once empty (their subjects moved to DEMO_REGION).
FORMER_DEMO_SITES = ("demo-galera", "demo-storage")


def has_configured_credentials() -> bool:
    """Whether boto3's chain finds credentials, without asking the instance metadata service.

    Only environment variables, shared config/credential files, SSO and processes are looked
    at: probing 169.254.169.254 off EC2 hangs or leaves the machine. On EC2 or ECS with an
    instance or task role, set VIGIL_DEMO=false.
    """
    import botocore.session  # boto's clients on first use, not in every process's start

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
    for concern in concerns.registered():
        if concern.demo_setup is not None:
            concern.demo_setup()
    remove_former_demo_sites()


def remove_former_demo_sites() -> None:
    """Delete the demo account's former per-concern sites once no subject is left in them
    (hide them instead while their status history is kept)."""
    for site in Region.objects.filter(
        account__is_demo=True, kind=Region.Kind.SITE, code__in=FORMER_DEMO_SITES
    ):
        if _holds_subjects(site):
            continue
        if site.deletion_blockers():
            Region.objects.filter(pk=site.pk).update(enabled=False)
        else:
            site.delete()


def _holds_subjects(region) -> bool:
    return any(c.subjects().filter(region=region).exists() for c in concerns.registered())


def demo_region(fallback_code: str = OUTSIDE_SITE_CODE, fallback_name: str = OUTSIDE_SITE_NAME):
    """The demo AWS region that shows every concern together (``DEMO_REGION``).

    Before the demo account's regions are discovered (in tests that set up one concern alone),
    the subjects go to a demo site instead, as in a version without regions.
    """
    region = Region.objects.filter(
        account__is_demo=True, kind=Region.Kind.AWS, code=DEMO_REGION, enabled=True
    ).first()
    return region or demo_site(fallback_code, fallback_name)


def demo_site(code: str, name: str):
    """A named site for a concern's demo subjects, owned by the demo account.

    Owned sites are shown and collected only while their account is enabled, so leaving demo
    mode hides the demo sites with the demo account, history kept.
    """
    ensure_demo_account(True)
    account = Account.objects.get(is_demo=True)
    region, _ = Region.objects.update_or_create(
        account=account, code=code, defaults={"kind": Region.Kind.SITE, "name": name}
    )
    return region
