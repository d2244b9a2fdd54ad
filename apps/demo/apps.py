from __future__ import annotations

from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "apps.demo"
    label = "demo"
    verbose_name = "Demo mode"

    def ready(self) -> None:
        """Demo mode reaches production code only through the hooks it fills here: the
        outbound guard's ``ALLOW_LOOPBACK=auto`` and the local mailbox's copies for the "Sent
        messages" page (each asks ``mode.demo_enabled`` when it is used)."""
        # Apps' modules once the registry is ready (mode reads the regions' models).
        from apps.alerts import mailbox
        from apps.lib import outbound

        from .mode import demo_enabled

        outbound.register_loopback_when_auto(demo_enabled)
        mailbox.register_keep_copies_when(demo_enabled)
