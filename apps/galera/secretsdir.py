"""Where Galera password files may live: a directory of their own, not one that holds other secrets.

A node names a file in ``VIGIL_GALERA_SECRETS_DIR``; its contents go to the node's host as the
password. If that directory also held the SSH key, Kubernetes' service-account token, an AWS
web-identity token or Vigil's other ``*_FILE`` secrets, a node could send any of them to a
host of its choice. ``shares_secrets`` (pure) names what such a directory would expose.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

#: Secrets that live in well-known places rather than in a ``*_FILE`` variable.
WELL_KNOWN = (
    "/run/secrets/kubernetes.io",  # service-account tokens (also /var/run/secrets/...)
    "/var/run/secrets/kubernetes.io",
    "/run/secrets/eks.amazonaws.com",  # EKS pod identity / IRSA tokens
    "/var/run/secrets/eks.amazonaws.com",
)


def _resolved(path: str | Path) -> Path:
    return Path(path).expanduser().resolve()


def shares_secrets(directory: str, environ: Mapping[str, str], home: str) -> list[str]:
    """What else ``directory`` holds or lies inside of; empty when it is a directory of its own."""
    root = _resolved(directory)
    others = {
        f"{name} ({value})": value
        for name, value in environ.items()
        if name.endswith("_FILE") and value
    }
    others.update({f"{place}": place for place in WELL_KNOWN})
    others.update(
        {
            f"{home}/.ssh (SSH keys)": f"{home}/.ssh",
            f"{home}/.aws (AWS credentials)": f"{home}/.aws",
        }
    )
    found = []
    for what, value in others.items():
        other = _resolved(value)
        if other.is_relative_to(root) or (root.is_relative_to(other) and root != Path("/")):
            found.append(what)
    if root == Path("/") or root == _resolved(home):
        found.insert(0, f"{root} (everything)")
    return found
