"""Whether Vigil runs in demo mode (``VIGIL_DEMO``: ``auto`` means "no AWS credentials found"),
and its fleet: each concern's demo subjects in the demo account's regions
(``apps/regions/demo.py``). No production module asks it: the demo app tells them through their
hooks (``apps.py``)."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from apps.regions import concerns
from apps.regions.models import Region

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
