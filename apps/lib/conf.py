"""The core's settings: every variable ``config/settings`` reads, declared as a concern's
``conf.py`` declares its own (``apps.lib.appconf``), by section.

``config/settings/base.py`` reads them (``production.py`` those whose default differs there);
docs/configuration.md is generated from these declarations. No Django here: this runs while the
settings load.
"""

from __future__ import annotations

from apps.lib.appconf import (
    REQUIRED,
    ROOT,
    Setting,
    at_least,
    auto_or_bool,
    auto_true_false,
    cidrs,
    rate,
)

DJANGO = (
    Setting(
        "SECRET_KEY",
        default="insecure-local-key-do-not-use-in-production",
        production=REQUIRED,
        help="A long random string (32 characters or more in production).",
    ),
    Setting("DEBUG", "bool", True, production=False, help="true for local development only."),
    Setting(
        "ALLOWED_HOSTS",
        "list",
        ["localhost", "127.0.0.1", "[::1]"],
        production=REQUIRED,
        help="Host names the web server answers to.",
    ),
    Setting(
        "CSRF_TRUSTED_ORIGINS",
        "list",
        [],
        help="Origins allowed to POST forms when behind a proxy, e.g. https://vigil.example.com.",
    ),
    Setting(
        "SECURE_SSL_REDIRECT",
        "bool",
        False,
        read_by="production",
        help="Redirect HTTP to HTTPS.",
    ),
    Setting(
        "SESSION_COOKIE_SECURE",
        "bool",
        True,
        read_by="production",
        help="Send the session and CSRF cookies over HTTPS only.",
    ),
    Setting(
        "SECURE_HSTS_SECONDS",
        "int",
        31536000,
        read_by="production",
        help="HSTS max-age in seconds (0: off), sent on HTTPS responses only.",
    ),
    Setting(
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "bool",
        False,
        read_by="production",
        help="Whether HSTS covers every subdomain too.",
    ),
    Setting("LOG_LEVEL", default="INFO", help="DEBUG, INFO, WARNING or ERROR."),
)

DATABASE_AND_BROKER = (
    Setting(
        "VIGIL_VAR_DIR",
        default="var",
        help="Where the embedded defaults keep their files (SQLite, the broker, beat's schedule, "
        "collected static files); relative to the checkout.",
    ),
    Setting(
        "DATABASE_URL",
        "db_url",
        default=lambda values: f"sqlite:///{ROOT / values['VIGIL_VAR_DIR'] / 'vigil.sqlite3'}",
        shown_default="`sqlite:///<VIGIL_VAR_DIR>/vigil.sqlite3`",
        help="PostgreSQL in production: postgres://user:password@host:5432/vigil.",
    ),
    Setting(
        "DATABASE_CONN_MAX_AGE",
        "int",
        60,
        help="PostgreSQL only: seconds a process keeps its database connection between requests "
        "(0: a new one each request).",
    ),
    Setting(
        "CELERY_BROKER_URL",
        default="filesystem://",
        help="filesystem:// is an embedded broker (kombu's filesystem transport in "
        "<VIGIL_VAR_DIR>/broker). Production: Redis.",
    ),
    Setting(
        "CACHE_URL",
        "cache_url",
        "locmemcache://",
        help="locmemcache:// is a cache per process. Production: Redis, shared by every process "
        "(rate limits, lockouts).",
    ),
    Setting("CELERY_TASK_TIME_LIMIT", "int", 600, help="Seconds before a task is killed."),
    Setting(
        "CELERY_TASK_SOFT_TIME_LIMIT", "int", 540, help="Seconds before a task is asked to stop."
    ),
    Setting(
        "POSTGRES_PASSWORD",
        read_by="docker-compose.yml",
        help="The PostgreSQL password of the compose file's database container.",
    ),
)

VIGIL = (
    Setting(
        "VIGIL_WEB_PORT",
        "int",
        8000,
        help="make run: the web server's port (docker-compose.yml: the host port it publishes).",
    ),
    Setting(
        "VIGIL_WEB_BIND",
        read_by="docker-compose.yml",
        shown_default="`127.0.0.1`",
        help="The host address the web port is published on; 127.0.0.1 keeps it for a TLS "
        "proxy on the same machine.",
    ),
    Setting(
        "VIGIL_BASE_URL",
        default=lambda values: f"http://127.0.0.1:{values['VIGIL_WEB_PORT']}",
        shown_default="`http://127.0.0.1:<VIGIL_WEB_PORT>`",
        help="The address people use, for links in emails.",
    ),
    Setting(
        "VIGIL_PAGE_CACHE_SECONDS",
        "int",
        10,
        help="Home tiles, region panels and the subject pages' charts are worked out at most "
        "once per this many seconds, shared by every viewer (0: on every request).",
    ),
    Setting(
        "VIGIL_ADMIN_USERNAME",
        default="admin",
        read_by="manage.py ensure_admin",
        help="The first admin user, created when there is none.",
    ),
    Setting(
        "VIGIL_ADMIN_EMAIL",
        default="admin@localhost",
        read_by="manage.py ensure_admin",
        help="The first admin user's email.",
    ),
    Setting(
        "VIGIL_ADMIN_PASSWORD",
        read_by="manage.py ensure_admin",
        help="The first admin user's password; empty: one is generated and printed once.",
    ),
    Setting(
        "VIGIL_DISCOVERY_INTERVAL_MINUTES",
        "int",
        360,
        help="How often each account's regions are discovered again.",
    ),
    Setting(
        "VIGIL_REGION_QUEUES",
        "list",
        [],
        help="Region codes whose work goes to its own queues (efs.eu-west-1, ...), for workers "
        "close to that region.",
    ),
    Setting(
        "VIGIL_DISPATCH_SECONDS",
        "float",
        60.0,
        help="Seconds between the beat's ticks that queue due work (the intervals live on the "
        "objects).",
    ),
    Setting(
        "VIGIL_LOGIN_FAILURE_LIMIT",
        "int",
        5,
        help="Failed logins for one username from one address (an IPv6 address counts as its /64) "
        "before that pair waits VIGIL_LOGIN_LOCKOUT_MINUTES.",
    ),
    Setting(
        "VIGIL_LOGIN_LOCKOUT_MINUTES",
        "int",
        15,
        help="How long a locked-out username and address wait.",
    ),
    Setting(
        "VIGIL_PROXY_COUNT",
        "int",
        0,
        production=1,
        help="Reverse proxies in front of the web server that append the client's address to "
        "X-Forwarded-For; login lockouts and /metrics' allow-list use the address the outermost "
        "one saw. Set 0 when nothing is in front, or clients could pick their own address.",
    ),
    Setting(
        "VIGIL_TRIALS_AT_ONCE",
        "int",
        2,
        help='"Measure once" and "Try" run in a web request: at most this many at once for '
        "everyone (and one per user); past it they are answered 429.",
    ),
)

API = (
    Setting(
        "VIGIL_API_RATE_READ",
        default="1200/min",
        check=rate,
        help="API reads (GET) per API key (else per session user or address), counted in "
        "CACHE_URL's cache.",
    ),
    Setting("VIGIL_API_RATE_WRITE", default="120/min", check=rate, help="API writes per key."),
    Setting(
        "VIGIL_API_RATE_USER_READ",
        default="2400/min",
        check=rate,
        help="API reads per user, across all of their keys and their session together.",
    ),
    Setting(
        "VIGIL_API_RATE_USER_WRITE",
        default="240/min",
        check=rate,
        help="API writes per user, across all of their keys and their session together.",
    ),
    Setting(
        "VIGIL_API_KEYS_PER_USER",
        "int",
        10,
        help="Live (unrevoked) API keys one user may hold; issuing one more is refused.",
    ),
    Setting(
        "VIGIL_API_KEY_CACHE_SECONDS",
        "int",
        5,
        help="An API key with its owner and role is kept in the cache this long (0: read every "
        "request); revoking it or changing its owner takes effect at once.",
    ),
    Setting(
        "VIGIL_API_LIST_CACHE_SECONDS",
        "int",
        10,
        help="A polled configuration list (file systems) keeps its rendered body this many "
        "seconds (0: render every request).",
    ),
)

AWS = (
    Setting(
        "AWS_ACCESS_KEY_ID",
        read_by="boto3",
        help="Credentials come from boto3's default chain: these, AWS_PROFILE with ~/.aws, or an "
        "instance or task role. Accounts may add a role to assume.",
    ),
    Setting("AWS_SECRET_ACCESS_KEY", read_by="boto3", help="See AWS_ACCESS_KEY_ID."),
    Setting(
        "AWS_ENDPOINT_URL",
        help="One endpoint for every AWS service (tests, stand-ins); empty for real AWS.",
    ),
    Setting(
        "AWS_MAX_ATTEMPTS",
        "int",
        8,
        help="Total attempts per AWS call (adaptive retry mode).",
    ),
    Setting("AWS_CONNECT_TIMEOUT", "float", 5.0, help="Seconds to connect to AWS."),
    Setting("AWS_READ_TIMEOUT", "float", 30.0, help="Seconds to wait for an AWS answer."),
    Setting(
        "VIGIL_DEMO",
        default="auto",
        check=auto_true_false,
        production="false",
        help="Demo mode: auto turns it on when boto3 finds no credentials in the environment or "
        "~/.aws (also the case on EC2 or ECS with an instance or task role); true or false "
        "force it.",
    ),
    Setting(
        "VIGIL_DEMO_AWS_PORT",
        "int",
        8765,
        help="make run in demo mode: the loopback port of the embedded AWS stand-in.",
    ),
    Setting(
        "VIGIL_DEMO_PROBES_PORT",
        "int",
        8770,
        help="make run in demo mode: the first of four loopback ports of the demo keep-alive "
        "servers.",
    ),
)

EMAIL = (
    Setting(
        "EMAIL_BACKEND",
        default="apps.alerts.mailbox.OneLineBackend",
        production="apps.alerts.integrations.email.ses.EmailBackend",
        help='Locally one line per email on the terminal (and in demo mode the "Sent messages" '
        "page); in production Amazon SES through django-anymail (its backend, with the boto3 "
        "client on Vigil's shared botocore loader).",
    ),
    Setting("DEFAULT_FROM_EMAIL", default="vigil@localhost", help="The sender of every email."),
    Setting("AWS_SES_REGION", default="us-east-1", help="The region of Amazon SES."),
    Setting(
        "AWS_SES_CONFIGURATION_SET",
        help="An SES configuration set for event publishing (bounces, complaints), if any.",
    ),
)

ALERTS = (
    Setting(
        "VIGIL_ALERT_REMINDER_HOURS",
        "float",
        4.0,
        help="Reminder interval while an incident stays open and unacknowledged.",
    ),
    Setting(
        "VIGIL_ALERT_FLAP_CHANGES",
        "int",
        5,
        help='A subject with more than this many changes in VIGIL_ALERT_FLAP_MINUTES is "flapping"'
        ": one summary email, then silence until it settles.",
    ),
    Setting("VIGIL_ALERT_FLAP_MINUTES", "int", 30, help="See VIGIL_ALERT_FLAP_CHANGES."),
    Setting(
        "VIGIL_ALERT_SETTLE_MINUTES",
        "int",
        10,
        help="A flapping subject whose state has not changed for this long: its last change is "
        "sent.",
    ),
    Setting(
        "VIGIL_ALERT_LEASE_SECONDS",
        "int",
        120,
        help="How long a worker holds a claimed notification before another may retry it.",
    ),
    Setting(
        "VIGIL_ALERT_GROUP_SECONDS",
        "int",
        60,
        help="Notifications of one channel and region created within this many seconds share "
        "one email.",
    ),
    Setting(
        "VIGIL_ALERT_HOLD_SECONDS",
        "float",
        1.0,
        help="After an email to a channel about a region, the next one waits this long, "
        "gathering what changed meanwhile: a lone alert is sent at once, a storm becomes a few "
        "emails.",
    ),
    Setting(
        "VIGIL_ALERT_REPEAT_HOLD_SECONDS",
        "float",
        30.0,
        help="...and this long when only subjects it already told about lately changed again.",
    ),
    Setting(
        "VIGIL_ALERT_SWEEP_SECONDS",
        "float",
        30.0,
        help="How often the beat sweeps the outbox: reminders, settled flappers, ended silences, "
        "retries.",
    ),
    Setting(
        "VIGIL_ALERT_UNDELIVERABLE_HOURS",
        "float",
        6.0,
        help="Once a day, alerts not delivered after this many hours go to the default rule's "
        "other channels.",
    ),
    Setting(
        "VIGIL_ALERT_HTTP_TIMEOUT",
        "float",
        10.0,
        help="Webhook, Slack and PagerDuty: total seconds per HTTP call.",
    ),
    Setting(
        "VIGIL_ALERT_CA_FILE",
        help="Webhook, Slack and PagerDuty: a CA bundle for TLS (empty: the system's).",
    ),
)

HISTORY = (
    Setting(
        "VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS",
        "int",
        90,
        help="Sent notifications are kept this long; pending and failed ones stay until settled.",
    ),
    Setting(
        "VIGIL_ALERT_TRANSITION_RETENTION_DAYS",
        "int",
        400,
        help="Processed transitions (status history, RAID history) are kept this long, never the "
        "last one of an incident.",
    ),
    Setting(
        "VIGIL_HISTORY_EXPIRY_BATCH",
        "int",
        2000,
        help="The beat's hourly expire-history task deletes older rows in batches of this many, "
        "each its own short transaction.",
    ),
)

OUTBOUND = (
    Setting(
        "VIGIL_OUTBOUND_ALLOW_LOOPBACK",
        default="auto",
        check=auto_or_bool,
        help="Every address Vigil connects to for a user (probe targets, Galera nodes, RAID SSH "
        "hosts, webhooks) is checked; link-local, metadata, multicast and reserved addresses "
        "are always refused. Loopback: auto (allowed only in demo mode), true or false.",
    ),
    Setting(
        "VIGIL_OUTBOUND_DENY",
        "list",
        [],
        check=cidrs,
        help="Networks refused as well (e.g. 10.0.0.0/16 for a management subnet).",
    ),
    Setting(
        "VIGIL_OUTBOUND_ALLOW",
        "list",
        [],
        check=cidrs,
        help="When set, the only networks Vigil may connect to.",
    ),
)

PUSH_AND_METRICS = (
    Setting(
        "VIGIL_PUSH_MAX_BYTES",
        "int",
        1024 * 1024,
        check=at_least(1024, "at least 1024 bytes"),
        help="The largest body a push endpoint reads; a larger one is answered 413 unread. Also "
        "bounds what an SSH command may print.",
    ),
    Setting(
        "VIGIL_METRICS_ALLOW",
        "list",
        [],
        check=cidrs,
        help="Clients (addresses or networks) that may read /metrics without an API key, e.g. the "
        "Prometheus server's; empty: /metrics always needs an API key.",
    ),
    Setting(
        "VIGIL_METRICS_CACHE_SECONDS",
        "int",
        15,
        help="/metrics renders its body at most once per this many seconds (0: every scrape).",
    ),
)

SECTIONS = (
    ("Django", DJANGO),
    ("Database, broker, cache", DATABASE_AND_BROKER),
    ("Vigil", VIGIL),
    ("API", API),
    ("AWS and demo mode", AWS),
    ("Email", EMAIL),
    ("Alerts", ALERTS),
    ("History retention", HISTORY),
    ("Outbound guard", OUTBOUND),
    ("Push endpoints and /metrics", PUSH_AND_METRICS),
)

SETTINGS = tuple(s for _, group in SECTIONS for s in group)
BY_NAME = {s.name: s for s in SETTINGS}
