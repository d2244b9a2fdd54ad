"""Whether Vigil runs in demo mode (``VIGIL_DEMO``: ``auto`` means "no AWS credentials found").

On the ground floor, so that the outbound guard (``ALLOW_LOOPBACK=auto``) can ask it; the demo
account, its regions and its fleet are ``apps/demo``'s.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings


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
