"""The demo account, its regions and its one site outside AWS, where each concern's demo pieces
(``<concern>/demo.py``) put their subjects. Only the demo's pieces use it: it sits here, below
the concerns, for them to import it downward (docs/architecture.md, "Imports point down");
whether the demo is on is ``apps/demo/mode.py``'s."""

from __future__ import annotations

from .models import Account, Region

DEMO_ACCOUNT_NAME = "Demo account"
#: The demo AWS region that holds the full picture: EFS beside a Galera cluster, the seed's RAID
#: host and keep-alive probes of the local demo servers, on one region page.
DEMO_REGION = "eu-west-1"
#: The one place outside AWS in the demo, to show that sites exist.
OUTSIDE_SITE_CODE = "demo-site"
OUTSIDE_SITE_NAME = "Demo site: on-premises (outside AWS)"


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
