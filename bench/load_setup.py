"""bench/load.sh's Django side: credentials and targets for wrk, and their cleanup.

    python bench/load_setup.py createdb           # DATABASE_URL's database, when missing
    python bench/load_setup.py seed ARGS...       # manage.py seed_fleet ARGS, when no fleet
    python bench/load_setup.py prepare OUT_FILE   # writes shell variables to OUT_FILE (0600)
    python bench/load_setup.py cleanup OUT_FILE   # revokes the key, ends the session
    python bench/load_setup.py dropdb             # DATABASE_URL's database (load.sh --tiny)
    python bench/load_setup.py cpu OUT wrk ARGS...  # runs wrk, writes its CPU time (ms) to OUT

``prepare`` makes sure a ``bench-load`` user exists (no usable password), logs it in the way a
browser would end up (a session in the configured session store), issues a read-only API key,
and picks the region with the most file systems for the region page. The session and the key
go to OUT_FILE only, never to the output: they are credentials. ``createdb`` prints
``created`` when it made the database.
"""

from __future__ import annotations

import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

USERNAME = "bench-load"
KEY_NAME = "bench/load.sh"


def seed(args: list[str]) -> None:
    """Seed a fleet (``manage.py seed_fleet ARGS``) when the database has no file system."""
    # apps' modules once main() has set Django up (django.setup())
    from django.core.management import call_command

    from apps.efs.models import FileSystem

    if not FileSystem.objects.exists():
        print(f"Seeding: manage.py seed_fleet {' '.join(args)}", flush=True)
        call_command("seed_fleet", *args)


def prepare(out: Path) -> None:
    # apps' modules once main() has set Django up (django.setup())
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db.models import Count
    from django.test import Client

    from apps.accounts.models import ApiKey
    from apps.regions import concerns
    from apps.regions.models import Region

    user, created = get_user_model().objects.get_or_create(username=USERNAME)
    if created:
        user.set_unusable_password()
        user.save()
    client = Client()
    client.force_login(user, backend="apps.accounts.backends.RoleBackend")
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    _, raw_key = ApiKey.issue(user, KEY_NAME, read_only=True)
    busiest = (
        Region.objects.shown()
        .annotate(n=Count("efs_filesystems"))
        .order_by("-n", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    counts = {c.key: c.subjects().count() for c in concerns.registered()}
    variables = {
        "LOAD_SESSION_COOKIE": f"{settings.SESSION_COOKIE_NAME}={session}",
        "LOAD_API_KEY": raw_key,
        "LOAD_REGION_PATH": f"/regions/{busiest}/" if busiest else "",
        "LOAD_FLEET": " ".join(f"{k}={n}" for k, n in counts.items())
        + f" regions={Region.objects.shown().count()}",
    }
    out.touch(mode=0o600)
    out.write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in variables.items()))


def cleanup(out: Path) -> None:
    # apps' modules once main() has set Django up (django.setup())
    from django.conf import settings
    from django.contrib.sessions.backends.base import SessionBase
    from django.utils.module_loading import import_string

    from apps.accounts.models import ApiKey

    values = dict(shlex.split(line)[0].split("=", 1) for line in out.read_text().splitlines())
    for key in ApiKey.objects.filter(user__username=USERNAME, name=KEY_NAME, revoked=None):
        key.revoke()
    store: type[SessionBase] = import_string(f"{settings.SESSION_ENGINE}.SessionStore")
    store(values["LOAD_SESSION_COOKIE"].split("=", 1)[1]).delete()


def server() -> tuple[dict[str, object], str]:
    """How to reach DATABASE_URL's server, and the database's name."""
    import environ

    cfg = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    if "postgresql" not in cfg["ENGINE"]:
        sys.exit("bench/load.sh: DATABASE_URL must be a PostgreSQL URL")
    params = {k: cfg[k.upper()] or None for k in ("host", "port", "user", "password")}
    return params, cfg["NAME"]


def createdb() -> None:
    import psycopg
    from psycopg import sql

    params, name = server()
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print("created")


def dropdb() -> None:
    import psycopg
    from psycopg import sql

    params, name = server()
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def cpu(out: Path, command: list[str]) -> int:
    """Run ``command`` (wrk) and write the CPU time it used, user and system, in ms to OUT."""
    code = subprocess.call(command)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.write_text(f"{round(1000 * (usage.ru_utime + usage.ru_stime))}\n")
    return code


def main() -> None:
    action = sys.argv[1]
    if action == "cpu":
        sys.exit(cpu(Path(sys.argv[2]), sys.argv[3:]))
    if action in ("createdb", "dropdb"):  # no Django: its database may not exist yet
        {"createdb": createdb, "dropdb": dropdb}[action]()
        return
    import django

    django.setup()
    if action == "seed":
        seed(sys.argv[2:])
    else:
        {"prepare": prepare, "cleanup": cleanup}[action](Path(sys.argv[2]))


if __name__ == "__main__":
    main()
