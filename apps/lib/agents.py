"""The push agents in ``agents/`` (a script, its systemd service and timer, its cron line),
served for download with Vigil's URL and the subject filled in.

A script's settings start as ``NAME=${NAME:-}`` lines; the download gives them defaults
(``NAME=${NAME:-'value'}``, quoted for sh), which the settings file still overrides. The token
is never filled in: it is shown once, when issued.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse

SUFFIXES = ("", ".service", ".timer", ".cron")


def agents_dir() -> Path:
    return Path(settings.BASE_DIR) / "agents"


def files(agent: str) -> list[str]:
    """The names of an agent's files: the script first, then its units and cron line."""
    return [agent + suffix for suffix in SUFFIXES]


def filled(script: str, values: Mapping[str, str]) -> str:
    """The script with each ``NAME=${NAME:-}`` line given ``values[NAME]`` as its default."""
    for name, value in values.items():
        empty = f"{name}=${{{name}:-}}\n"
        script = script.replace(empty, f"{name}=${{{name}:-{shlex.quote(value)}}}\n", 1)
    return script


def download(agent: str, filename: str, values: Mapping[str, str]) -> HttpResponse:
    """One of the agent's files as an attachment (404 for any other name)."""
    if filename not in files(agent):
        raise Http404("No such agent file")
    text = (agents_dir() / filename).read_text()
    if filename == agent:
        text = filled(text, {"VIGIL_URL": settings.VIGIL_BASE_URL, **values})
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
