"""A certified OpenID Connect provider on loopback: panva's ``oidc-provider`` run by Node.js
(``tests/js/oidc_provider.mjs``; ``npm ci`` in tests/js installs it, as ``make test`` does).

``OidcProvider(vigil_url).start()`` writes its config (one client, Vigil's callback and its
sign-in page as the redirect addresses) and an accounts file, and runs it as a child process
until ``stop()``. ``set_groups(name, groups)`` rewrites someone's groups, which the provider
reads at their next sign-in. Its development login page takes any password.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.services import free_port, npm_ci, wait_for

JS = Path(__file__).resolve().parents[1] / "js"
CLIENT_ID = "vigil-test"
CLIENT_SECRET = "vigil-test-client-secret-0123456789"


class OidcProvider:
    def __init__(self, vigil_url: str) -> None:
        self.vigil_url = vigil_url.rstrip("/")
        self.folder = Path(tempfile.mkdtemp(prefix="vigil-oidc-"))
        self.port = free_port()
        self.accounts: dict[str, dict] = {}
        self.process: subprocess.Popen | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OidcProvider:
        npm_ci("oidc-provider")
        self._write_accounts()
        config = {
            "port": self.port,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [f"{self.vigil_url}/accounts/sso/oidc/login/callback/"],
            "post_logout_redirect_uris": [f"{self.vigil_url}/accounts/login/"],
            "accounts": str(self.folder / "accounts.json"),
        }
        (self.folder / "config.json").write_text(json.dumps(config))
        self.log = open(self.folder / "provider.log", "w")  # noqa: SIM115 (the child keeps it)
        self.process = subprocess.Popen(
            ["node", str(JS / "oidc_provider.mjs"), str(self.folder / "config.json")],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=JS,
        )
        wait_for(self._ready, 30, "the OpenID Connect provider to start")
        return self

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(
                f"oidc-provider exited: {(self.folder / 'provider.log').read_text()}"
            )
        return "ready " in (self.folder / "provider.log").read_text()

    def _write_accounts(self) -> None:
        path = self.folder / "accounts.json"
        path.with_suffix(".tmp").write_text(json.dumps(self.accounts))
        path.with_suffix(".tmp").replace(path)

    def set_groups(self, name: str, groups: list[str]) -> None:
        self.accounts[name] = {"groups": groups}
        self._write_accounts()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)
