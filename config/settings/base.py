"""Base settings: runnable local defaults (SQLite, an embedded Celery broker, demo AWS).

Every value comes from the environment through django-environ's ``FileAwareEnv``: any variable
may instead be given as ``NAME_FILE`` pointing at a file that holds the value (Docker/Kubernetes
secrets). ``.env.example`` documents each variable. A malformed value, or a ``VIGIL_*`` variable
neither this file nor an installed concern's ``conf.py`` knows, stops the start with a message
that names the variable. Each concern's own settings are read by its ``conf.py``
(``app_settings``), so a new concern adds none here.
"""

from __future__ import annotations

import importlib
import importlib.util
import ipaddress
import os
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from apps.accounts import conf as accounts_conf
from apps.lib import appconf

BASE_DIR = Path(__file__).resolve().parents[2]

env = environ.FileAwareEnv()


def setting(name: str, cast: str = "str", default: object = environ.Env.NOTSET) -> object:
    """Read one variable, turning a malformed value into an error that names it."""
    try:
        value = getattr(env, cast)(name, default=default)
    except ImproperlyConfigured:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        raise ImproperlyConfigured(f"Invalid value for {name}: {exc}") from exc
    if cast == "db_url" and not value.get("ENGINE"):
        raise ImproperlyConfigured(f"Invalid value for {name}: not a database URL")
    return value


KNOWN_VIGIL_VARIABLES = {
    "VIGIL_ADMIN_EMAIL",
    "VIGIL_ALERT_CA_FILE",
    "VIGIL_ALERT_FLAP_CHANGES",
    "VIGIL_ALERT_FLAP_MINUTES",
    "VIGIL_ALERT_GROUP_SECONDS",
    "VIGIL_ALERT_HOLD_SECONDS",
    "VIGIL_ALERT_HTTP_TIMEOUT",
    "VIGIL_ALERT_LEASE_SECONDS",
    "VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS",
    "VIGIL_ALERT_REMINDER_HOURS",
    "VIGIL_ALERT_REPEAT_HOLD_SECONDS",
    "VIGIL_ALERT_SETTLE_MINUTES",
    "VIGIL_ALERT_TRANSITION_RETENTION_DAYS",
    "VIGIL_ALERT_SWEEP_SECONDS",
    "VIGIL_ALERT_UNDELIVERABLE_HOURS",
    "VIGIL_API_KEYS_PER_USER",
    "VIGIL_API_KEY_CACHE_SECONDS",
    "VIGIL_API_LIST_CACHE_SECONDS",
    "VIGIL_API_RATE_READ",
    "VIGIL_API_RATE_USER_READ",
    "VIGIL_API_RATE_USER_WRITE",
    "VIGIL_API_RATE_WRITE",
    "VIGIL_ADMIN_PASSWORD",
    "VIGIL_ADMIN_USERNAME",
    "VIGIL_BASE_URL",
    "VIGIL_DEMO",
    "VIGIL_DEMO_AWS_PORT",
    "VIGIL_DEMO_PROBES_PORT",
    "VIGIL_DISCOVERY_INTERVAL_MINUTES",
    "VIGIL_DISPATCH_SECONDS",
    "VIGIL_HISTORY_EXPIRY_BATCH",
    "VIGIL_METRICS_ALLOW",
    "VIGIL_METRICS_CACHE_SECONDS",
    "VIGIL_OUTBOUND_ALLOW",
    "VIGIL_OUTBOUND_ALLOW_LOOPBACK",
    "VIGIL_OUTBOUND_DENY",
    "VIGIL_PAGE_CACHE_SECONDS",
    "VIGIL_LOGIN_FAILURE_LIMIT",
    "VIGIL_LOGIN_LOCKOUT_MINUTES",
    "VIGIL_PROXY_COUNT",
    "VIGIL_PUSH_MAX_BYTES",
    "VIGIL_REGION_QUEUES",
    "VIGIL_TRIALS_AT_ONCE",
    "VIGIL_VAR_DIR",
    "VIGIL_WEB_BIND",  # docker-compose.yml only
    "VIGIL_WEB_PORT",
}


def check_unknown_variables(environ_: os._Environ[str] | dict[str, str]) -> None:
    """Fail on a VIGIL_* variable nobody reads: a typo must not silently keep a default."""
    known = KNOWN_VIGIL_VARIABLES | {f"{name}_FILE" for name in KNOWN_VIGIL_VARIABLES}
    unknown = sorted(k for k in environ_ if k.startswith("VIGIL_") and k not in known)
    if unknown:
        raise ImproperlyConfigured(
            f"Unknown setting {', '.join(unknown)}; known VIGIL_* settings are in .env.example"
        )


# The embedded defaults' files: SQLite, the filesystem broker, beat's schedule, collected static
# (a relative path is taken from the checkout).
VAR_DIR = BASE_DIR / setting("VIGIL_VAR_DIR", default="var")

# --- Django core -----------------------------------------------------------------------------
SECRET_KEY = setting("SECRET_KEY", default="insecure-local-key-do-not-use-in-production")
DEBUG = setting("DEBUG", "bool", default=True)
ALLOWED_HOSTS = setting("ALLOWED_HOSTS", "list", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = setting("CSRF_TRUSTED_ORIGINS", "list", default=[])
VIGIL_WEB_PORT = setting("VIGIL_WEB_PORT", "int", default=8000)
# The home tiles and region panels are rendered at most once per this many seconds (0: always).
VIGIL_PAGE_CACHE_SECONDS = setting("VIGIL_PAGE_CACHE_SECONDS", "int", default=10)
VIGIL_BASE_URL = setting("VIGIL_BASE_URL", default=f"http://127.0.0.1:{VIGIL_WEB_PORT}")

INSTALLED_APPS = [
    "apps.accounts.admin_site.VigilAdminConfig",  # django.contrib.admin, opened by role
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",  # allauth's two-factor pages
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    "csp",
    "auditlog",
    # Sign-in: local passwords, OpenID Connect, two-factor (apps/accounts/adapters.py)
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.mfa",
    "apps.accounts",
    "apps.regions",
    "apps.alerts",
    "apps.demo",
    "apps.prometheus",
    # Concern apps: add yours below this line.
    "apps.galera",
    "apps.raid",
    "apps.efs",
    "apps.probes",
    "apps.ebs",
]


def app_settings(apps: list[str] | tuple[str, ...]) -> dict[str, object]:
    """The settings of every app of ours that has a ``conf.py`` (each concern's, see
    apps/lib/appconf.py): the names of its ``SETTINGS`` join the known ones, with their values."""
    values: dict[str, object] = {}
    for app in apps:
        if app.rpartition(".")[2][:1].isupper():  # an AppConfig path
            continue
        if not (BASE_DIR / app.partition(".")[0]).is_dir():
            continue  # not ours: a third-party app's conf module is not this contract
        if importlib.util.find_spec(f"{app}.conf") is not None:
            conf = importlib.import_module(f"{app}.conf")
            KNOWN_VIGIL_VARIABLES.update(s.name for s in conf.SETTINGS)
            values.update(appconf.read(conf.SETTINGS, setting))
    return values


def install(namespace: dict[str, object], *apps: str) -> None:
    """Add apps (with their settings) to a settings module's ``INSTALLED_APPS``: test.py's
    concern of the tests is installed as a real one would be."""
    namespace["INSTALLED_APPS"] = [*namespace["INSTALLED_APPS"], *apps]
    namespace.update(app_settings(apps))


globals().update(app_settings(INSTALLED_APPS))
check_unknown_variables(os.environ)

MIDDLEWARE = [
    "apps.accounts.middleware.HealthzMiddleware",  # before host checks: probes use 127.0.0.1
    "apps.api.errors.JsonNotFound",  # an unknown /api/ path is a JSON 404, DEBUG or not
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "apps.accounts.middleware.LoginRequiredMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "apps.accounts.middleware.TwoFactorRequiredMiddleware",  # VIGIL_MFA_REQUIRED
    "apps.accounts.timezones.TimezoneMiddleware",  # the viewer's zone for the pages
    "apps.accounts.audit.AuditMiddleware",  # who and from where, for the audit trail
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into a 429
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.demo.context_processors.demo",
                "apps.accounts.context_processors.roles",
                "apps.alerts.context_processors.delivery_problems",
                "apps.alerts.context_processors.alarm",
                "csp.context_processors.nonce",
            ],
        },
    }
]

DATABASES = {
    "default": setting("DATABASE_URL", "db_url", default=f"sqlite:///{VAR_DIR / 'vigil.sqlite3'}")
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share the file: wait for a lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    # Keep each process's connection between requests (a new PostgreSQL connection is a fork on
    # the server and an authentication: more than a short API answer costs); checked before
    # reuse, so a restarted database costs one failed check, not an error.
    DATABASES["default"]["CONN_MAX_AGE"] = setting("DATABASE_CONN_MAX_AGE", "int", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Unset: each process keeps its own cache (make run). Production shares Redis
# (CACHE_URL=redis://redis:6379/1): API rate limits and login lockouts count across processes.
CACHES = {"default": setting("CACHE_URL", "cache_url", default="locmemcache://")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "apps.lib.cache.RedisCache"  # one client per server

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out username+address
    "apps.accounts.backends.RoleBackend",  # ModelBackend + the Admin group's every permission
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "regions:home"
LOGOUT_REDIRECT_URL = "account_login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG  # make run serves static files without collectstatic

# One line per email on the terminal (and, in demo mode, the "Sent messages" page).
EMAIL_BACKEND = setting("EMAIL_BACKEND", default="apps.alerts.mailbox.OneLineBackend")
DEFAULT_FROM_EMAIL = setting("DEFAULT_FROM_EMAIL", default="vigil@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": setting("LOG_LEVEL", default="INFO")},
    "loggers": {
        "botocore": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its "BEGIN" line at every start
    },
}

# --- Security: login rate limiting, Content-Security-Policy ----------------------------------
# django-axes: after this many failed logins for one username from one address (the login page
# and the admin's), that pair is locked out for this long; a success resets the count.
AXES_FAILURE_LIMIT = setting("VIGIL_LOGIN_FAILURE_LIMIT", "int", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=setting("VIGIL_LOGIN_LOCKOUT_MINUTES", "int", default=15))
# Counted per username and address (an IPv6 address's /64), and per username across every
# address, which VIGIL_LOGIN_USER_FAILURE_LIMIT pauses (apps.accounts.lockout.LockoutHandler).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username"]
AXES_HANDLER = "apps.accounts.lockout.LockoutHandler"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "apps.accounts.lockout.lockout_response"  # a page, 429
AXES_CLIENT_IP_CALLABLE = "apps.accounts.lockout.lockout_address"
AXES_USERNAME_CALLABLE = "apps.accounts.lockout.lockout_username"  # allauth's form: "login"
# How many reverse proxies in front of the web server append to X-Forwarded-For: the client's
# address is the one the outermost of them saw. 0: the peer address itself (no proxy).
VIGIL_PROXY_COUNT = setting("VIGIL_PROXY_COUNT", "int", default=0)
# django-csp: only this site's own scripts, styles and connections; inline scripts and styles
# only with the per-response nonce (the API docs' bootstrap); no plugins, no framing.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- Sign-in (django-allauth, django-auth-ldap; apps/accounts/conf.py has the VIGIL_* settings) -
globals().update(accounts_conf.sign_in_settings(globals()))
CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"] += accounts_conf.form_targets(globals())
if VIGIL_LDAP_ENABLED:  # noqa: F821  (set by sign_in_settings)
    AUTHENTICATION_BACKENDS.append("apps.accounts.directory.LDAPBackend")
ACCOUNT_ADAPTER = "apps.accounts.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "apps.accounts.adapters.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "password1*", "password2*"]  # signup stays closed
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_UNIQUE_EMAIL = False  # people are their usernames; a provider's email links nothing
ACCOUNT_SESSION_REMEMBER = True  # as Django's login did: the session outlives the browser
ACCOUNT_LOGOUT_ON_GET = False
# django-axes is the one lockout (per username and address, and per username): allauth's own
# count of failed logins would answer first, with a form error instead of the lockout page.
ACCOUNT_RATE_LIMITS = {"login_failed": False}
SOCIALACCOUNT_AUTO_SIGNUP = True  # the provider vouches: no signup form
SOCIALACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_EMAIL_REQUIRED = False
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_ONLY = False
SOCIALACCOUNT_REQUESTS_TIMEOUT = 10
# The provider's redirect URI is <VIGIL_BASE_URL>/accounts/sso/oidc/login/callback/ (config/urls.py).
SOCIALACCOUNT_OPENID_CONNECT_URL_PREFIX = ""
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes", "webauthn"]
MFA_TOTP_ISSUER = "Vigil"
MFA_PASSKEY_LOGIN_ENABLED = False
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = DEBUG  # make run serves http://127.0.0.1

# --- Audit trail (django-auditlog, apps/accounts/audit.py) ------------------------------------
# Secret fields are recorded as "(hidden)" when set, never their value.
AUDITLOG_MASK_CALLABLE = "apps.accounts.audit.mask"

# --- API -------------------------------------------------------------------------------------


def api_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate such as ``1200/min`` (s, min, hour, day); ``none`` for no limit."""
    value = str(setting(name, default=default)).strip()
    if value.lower() == "none":
        return None
    count, _, period = value.partition("/")
    if not count.isdigit() or period not in ("s", "sec", "m", "min", "h", "hour", "d", "day"):
        raise ImproperlyConfigured(f"Invalid value for {name}: {value!r}, expected e.g. 1200/min")
    return value


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Reads for everyone logged in; every write needs its model permission (403 first).
    "DEFAULT_PERMISSION_CLASSES": ["apps.accounts.permissions.RolePermissions"],
    "DEFAULT_SCHEMA_CLASS": "apps.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "apps.api.lists.Pagination",
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": [
        "apps.api.lists.FilterBackend",
        "apps.api.lists.StableOrdering",
    ],
    # Per API key (else the push token's subject, session user, address), and per user across
    # all their keys and sessions, counted in CACHES["default"].
    "DEFAULT_THROTTLE_CLASSES": [
        "apps.api.throttling.ReadThrottle",
        "apps.api.throttling.WriteThrottle",
        "apps.api.throttling.UserReadThrottle",
        "apps.api.throttling.UserWriteThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "read": api_rate("VIGIL_API_RATE_READ", "1200/min"),
        "write": api_rate("VIGIL_API_RATE_WRITE", "120/min"),
        "user_read": api_rate("VIGIL_API_RATE_USER_READ", "2400/min"),
        "user_write": api_rate("VIGIL_API_RATE_USER_WRITE", "240/min"),
    },
    "EXCEPTION_HANDLER": "apps.api.errors.json_exception_handler",
}
# An API key with its owner and role is kept in the cache this long (0: read every request);
# revoking it or changing its owner takes effect at once (apps/accounts/keycache.py).
VIGIL_API_KEY_CACHE_SECONDS = setting("VIGIL_API_KEY_CACHE_SECONDS", "int", default=5)
# "Measure once" and "Try" run in a web request: at most this many at once for everyone (and
# one per user), so that they never hold every web thread (apps/lib/trials.py).
VIGIL_TRIALS_AT_ONCE = setting("VIGIL_TRIALS_AT_ONCE", "int", default=2)
# Live (unrevoked) API keys one user may hold; issuing one more is refused.
VIGIL_API_KEYS_PER_USER = setting("VIGIL_API_KEYS_PER_USER", "int", default=10)
# A polled configuration list (file systems) keeps its rendered body this many seconds, under
# its validator, the query and the caller's role (apps.api.conditional.CachedList; 0: off).
VIGIL_API_LIST_CACHE_SECONDS = setting("VIGIL_API_LIST_CACHE_SECONDS", "int", default=10)
SPECTACULAR_SETTINGS = {
    "TITLE": "Vigil API",
    "DESCRIPTION": "Health of AWS EFS, Galera clusters, md-RAID arrays and HTTP keep-alive, "
    "per region. Authenticate with an API key: `Authorization: Bearer vgr_…` (read-only) or "
    "`vgw_…` (read-write).\n\n"
    "**Version 2 (breaking):** the history lists (probe results, Galera snapshots, transitions, "
    "RAID history, incidents) page by cursor: `?limit=` and the `next` link of the answer "
    "`{next, results}`, newest first; they no longer take `offset` or `ordering` nor answer a "
    "`count`. A cursor the API did not give is a 400. Configuration lists keep "
    "`?limit=&offset=&ordering=` and `count`.",
    "VERSION": "2",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs page need a login or an API key, like every other route.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"StatusEnum": "apps.regions.models.STATUS_CHOICES"},
}

# --- Prometheus (apps/prometheus) -----------------------------------------------------------
# Client addresses or networks (CIDRs, comma-separated) that may read /metrics without an API
# key, e.g. the Prometheus server's. Empty: /metrics always needs an API key.
VIGIL_METRICS_ALLOW = setting("VIGIL_METRICS_ALLOW", "list", default=[])
# /metrics renders its body at most once per this many seconds (0: every scrape).
VIGIL_METRICS_CACHE_SECONDS = setting("VIGIL_METRICS_CACHE_SECONDS", "int", default=15)
for _cidr in VIGIL_METRICS_ALLOW:
    try:
        ipaddress.ip_network(_cidr.strip(), strict=False)
    except ValueError as exc:
        raise ImproperlyConfigured(f"Invalid value for VIGIL_METRICS_ALLOW: {exc}") from exc

# --- Outbound guard (apps/lib/outbound.py) ----------------------------------------------------
# Every address Vigil connects to for a user (probe targets, Galera nodes, RAID SSH hosts,
# webhooks): link-local, the metadata service, multicast and reserved addresses are refused
# always. Loopback: auto (allowed in demo mode only), true or false.
VIGIL_OUTBOUND_ALLOW_LOOPBACK = setting("VIGIL_OUTBOUND_ALLOW_LOOPBACK", default="auto").lower()
if VIGIL_OUTBOUND_ALLOW_LOOPBACK not in {"auto", "true", "false"}:
    raise ImproperlyConfigured(
        f"Invalid value for VIGIL_OUTBOUND_ALLOW_LOOPBACK: {VIGIL_OUTBOUND_ALLOW_LOOPBACK!r} "
        "(auto, true or false)"
    )
if VIGIL_OUTBOUND_ALLOW_LOOPBACK != "auto":
    VIGIL_OUTBOUND_ALLOW_LOOPBACK = VIGIL_OUTBOUND_ALLOW_LOOPBACK == "true"
# Networks (CIDRs, comma-separated) refused besides those, and, when set, the only ones allowed.
VIGIL_OUTBOUND_DENY = setting("VIGIL_OUTBOUND_DENY", "list", default=[])
VIGIL_OUTBOUND_ALLOW = setting("VIGIL_OUTBOUND_ALLOW", "list", default=[])
for _name, _cidrs in (
    ("VIGIL_OUTBOUND_DENY", VIGIL_OUTBOUND_DENY),
    ("VIGIL_OUTBOUND_ALLOW", VIGIL_OUTBOUND_ALLOW),
):
    for _cidr in _cidrs:
        try:
            ipaddress.ip_network(_cidr.strip(), strict=False)
        except ValueError as exc:
            raise ImproperlyConfigured(f"Invalid value for {_name}: {exc}") from exc

# --- Celery ----------------------------------------------------------------------------------
# Unset CELERY_BROKER_URL means the embedded broker: kombu's filesystem transport in var/,
# shared by the web server, the worker and beat. Production sets a Redis URL.
CELERY_BROKER_URL = setting("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),  # else ./control in the working dir
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = setting("CELERY_TASK_TIME_LIMIT", "int", default=600)
CELERY_TASK_SOFT_TIME_LIMIT = setting("CELERY_TASK_SOFT_TIME_LIMIT", "int", default=540)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# The outbox sweep: reminders, settled flappers, retries; silences ending before the next sweep
# get a wake-up of their own at their end.
VIGIL_ALERT_SWEEP_SECONDS = setting("VIGIL_ALERT_SWEEP_SECONDS", "float", default=30.0)
# The beat's tick that queues due work; the intervals themselves live on the objects.
VIGIL_DISPATCH_SECONDS = setting("VIGIL_DISPATCH_SECONDS", "float", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "dispatch-due-work": {
        "task": "apps.regions.tasks.dispatch",
        "schedule": VIGIL_DISPATCH_SECONDS,
    },
    "alerts-sweep": {"task": "apps.alerts.tasks.sweep", "schedule": VIGIL_ALERT_SWEEP_SECONDS},
    "alerts-undeliverable": {"task": "apps.alerts.tasks.undeliverable", "schedule": 24 * 3600.0},
    "expire-history": {"task": "apps.regions.tasks.expire_history", "schedule": 3600.0},
}
# Retention of the grow-only history (apps/lib/retention.py), expired hourly by the beat in
# batches of VIGIL_HISTORY_EXPIRY_BATCH rows, each its own short transaction. EFS minute and
# hour rows keep VIGIL_EFS_MINUTE_RETENTION_DAYS / VIGIL_EFS_HOUR_RETENTION_DAYS (the roll-up).
# Sent notifications only: pending and failed ones stay until they are settled.
VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS = setting(
    "VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS", "int", default=90
)
# Processed transitions (the status history pages and RAID history), but never the last one
# of an incident; as long as EFS keeps hour rows, so a chart never outlives its history.
VIGIL_ALERT_TRANSITION_RETENTION_DAYS = setting(
    "VIGIL_ALERT_TRANSITION_RETENTION_DAYS", "int", default=400
)
VIGIL_HISTORY_EXPIRY_BATCH = setting("VIGIL_HISTORY_EXPIRY_BATCH", "int", default=2000)
# Region codes whose work goes to its own queues ("efs.eu-west-1"), for workers that run
# close to that region: VIGIL_REGION_QUEUES=eu-west-1,ap-east-1
VIGIL_REGION_QUEUES = setting("VIGIL_REGION_QUEUES", "list", default=[])

# --- AWS -------------------------------------------------------------------------------------
# Demo mode: "auto" turns it on when boto3 finds no credentials; "true"/"false" force it.
VIGIL_DEMO = setting("VIGIL_DEMO", default="auto").lower()
if VIGIL_DEMO not in {"auto", "true", "false"}:
    raise ImproperlyConfigured(
        f"Invalid value for VIGIL_DEMO: {VIGIL_DEMO!r} (auto, true or false)"
    )
VIGIL_DEMO_AWS_PORT = setting("VIGIL_DEMO_AWS_PORT", "int", default=8765)
AWS_ENDPOINT_URL = setting("AWS_ENDPOINT_URL", default="") or None
AWS_MAX_ATTEMPTS = setting("AWS_MAX_ATTEMPTS", "int", default=8)
AWS_CONNECT_TIMEOUT = setting("AWS_CONNECT_TIMEOUT", "float", default=5.0)
AWS_READ_TIMEOUT = setting("AWS_READ_TIMEOUT", "float", default=30.0)
VIGIL_DISCOVERY_INTERVAL_MINUTES = setting("VIGIL_DISCOVERY_INTERVAL_MINUTES", "int", default=360)

# --- Alerts ----------------------------------------------------------------------------------
VIGIL_ALERT_REMINDER_HOURS = setting("VIGIL_ALERT_REMINDER_HOURS", "float", default=4.0)
VIGIL_ALERT_FLAP_CHANGES = setting("VIGIL_ALERT_FLAP_CHANGES", "int", default=5)
VIGIL_ALERT_FLAP_MINUTES = setting("VIGIL_ALERT_FLAP_MINUTES", "int", default=30)
# A flapping subject whose state has not changed for this long: its last change is sent.
VIGIL_ALERT_SETTLE_MINUTES = setting("VIGIL_ALERT_SETTLE_MINUTES", "int", default=10)
VIGIL_ALERT_LEASE_SECONDS = setting("VIGIL_ALERT_LEASE_SECONDS", "int", default=120)
VIGIL_ALERT_GROUP_SECONDS = setting("VIGIL_ALERT_GROUP_SECONDS", "int", default=60)
# After an email to a channel about a region, the next one waits this long, gathering what
# changed meanwhile: a lone alert is sent at once, a storm becomes a few emails.
VIGIL_ALERT_HOLD_SECONDS = setting("VIGIL_ALERT_HOLD_SECONDS", "float", default=1.0)
# ...and this long when only subjects it already told about lately changed again (a storm).
VIGIL_ALERT_REPEAT_HOLD_SECONDS = setting("VIGIL_ALERT_REPEAT_HOLD_SECONDS", "float", default=30.0)
# The daily check: an alert not delivered after this many hours goes to the default rule's
# other channels.
VIGIL_ALERT_UNDELIVERABLE_HOURS = setting("VIGIL_ALERT_UNDELIVERABLE_HOURS", "float", default=6.0)
# Webhook, Slack and PagerDuty calls: total seconds per call, and a CA bundle for TLS (empty:
# the system's).
VIGIL_ALERT_HTTP_TIMEOUT = setting("VIGIL_ALERT_HTTP_TIMEOUT", "float", default=10.0)
VIGIL_ALERT_CA_FILE = setting("VIGIL_ALERT_CA_FILE", default="")
# Amazon SES through django-anymail (production's EMAIL_BACKEND). Vigil retries sending itself,
# so boto3 tries each call only twice.
ANYMAIL = {
    "AMAZON_SES_CLIENT_PARAMS": {
        "region_name": setting("AWS_SES_REGION", default="us-east-1"),
        **({"endpoint_url": AWS_ENDPOINT_URL} if AWS_ENDPOINT_URL else {}),
        "config": {"connect_timeout": 5, "read_timeout": 20, "retries": {"total_max_attempts": 2}},
    },
    "AMAZON_SES_CONFIGURATION_SET_NAME": setting("AWS_SES_CONFIGURATION_SET", default="") or None,
}

# --- Demo keep-alive servers (apps/probes/demo.py) -------------------------------------------
# make run in demo mode: the first of four loopback ports of the demo keep-alive servers.
VIGIL_DEMO_PROBES_PORT = setting("VIGIL_DEMO_PROBES_PORT", "int", default=8770)

# --- Push endpoints (RAID hosts, Galera nodes) ----------------------------------------------
# The largest body a push endpoint reads (apps.lib.bodies); larger ones are answered 413.
VIGIL_PUSH_MAX_BYTES = setting("VIGIL_PUSH_MAX_BYTES", "int", default=1024 * 1024)
if VIGIL_PUSH_MAX_BYTES < 1024:
    raise ImproperlyConfigured("Invalid value for VIGIL_PUSH_MAX_BYTES: at least 1024 bytes")
