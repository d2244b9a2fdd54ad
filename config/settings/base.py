"""Base settings: runnable local defaults (SQLite, an embedded Celery broker, demo AWS).

Every variable read here is declared once, with its type, default, check and meaning: the
core's in ``apps/lib/conf.py``, each app's in its ``conf.py`` (``apps/lib/appconf.py``).
Any variable may instead be given as ``NAME_FILE`` pointing at a file that holds the value
(Docker/Kubernetes secrets). A malformed value, or a ``VIGIL_*`` variable no declaration names,
stops the start with a message that names the variable. docs/configuration.md lists them all
(``manage.py settings_reference``); a new concern adds none here.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from csp.constants import NONCE, NONE, SELF

from apps.accounts import conf as accounts_conf
from apps.lib import appconf
from apps.lib import conf as core_conf
from apps.lib.appconf import setting  # noqa: F401  (production.py's and the tests' reader)

BASE_DIR = Path(__file__).resolve().parents[2]

# The core's variables (apps/lib/conf.py); the VIGIL_* ones are settings of the same name.
core = appconf.read(core_conf.SETTINGS)
globals().update({name: value for name, value in core.items() if name.startswith("VIGIL_")})

# The embedded defaults' files: SQLite, the filesystem broker, beat's schedule, collected static
# (a relative path is taken from the checkout).
VAR_DIR = BASE_DIR / core["VIGIL_VAR_DIR"]

# --- Django core -----------------------------------------------------------------------------
SECRET_KEY = core["SECRET_KEY"]
DEBUG = core["DEBUG"]
ALLOWED_HOSTS = core["ALLOWED_HOSTS"]
CSRF_TRUSTED_ORIGINS = core["CSRF_TRUSTED_ORIGINS"]

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
    """The settings of every app of ours that has a ``conf.py`` (apps/lib/appconf.py): their
    names join the known ones, with their values."""
    values: dict[str, object] = {}
    for declared in appconf.declared(apps, core=False):  # the core's are read above
        KNOWN_VIGIL_VARIABLES.update(appconf.known_names([declared]))
        values.update(appconf.read(declared.settings))
    return values


def install(namespace: dict[str, object], *apps: str) -> None:
    """Add apps (with their settings) to a settings module's ``INSTALLED_APPS``: test.py's
    concern of the tests is installed as a real one would be."""
    namespace["INSTALLED_APPS"] = [*namespace["INSTALLED_APPS"], *apps]
    namespace.update(app_settings(apps))


# Every declared VIGIL_* variable (the core's and each installed app's): any other stops the start.
KNOWN_VIGIL_VARIABLES = appconf.known_names(appconf.declared([]))
globals().update(app_settings(INSTALLED_APPS))
appconf.check_unknown_variables(KNOWN_VIGIL_VARIABLES)

MIDDLEWARE = [
    "apps.accounts.middleware.HealthzMiddleware",  # before host checks: probes use 127.0.0.1
    "apps.api.errors.JsonNotFound",  # an unknown /api/ path is a JSON 404, DEBUG or not
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "apps.api.fastpath.FastPath",  # a repeated API list by key: answered before sessions, DRF
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

DATABASES = {"default": core["DATABASE_URL"]}  # default: SQLite in VAR_DIR
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat share the file: wait for a lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    # Keep each process's connection between requests (a new PostgreSQL connection is a fork on
    # the server and an authentication: more than a short API answer costs); checked before
    # reuse, so a restarted database costs one failed check, not an error.
    DATABASES["default"]["CONN_MAX_AGE"] = core["DATABASE_CONN_MAX_AGE"]
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Unset: each process keeps its own cache (make run). Production shares Redis
# (CACHE_URL=redis://redis:6379/1): API rate limits and login lockouts count across processes.
CACHES = {"default": core["CACHE_URL"]}
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
EMAIL_BACKEND = core["EMAIL_BACKEND"]
DEFAULT_FROM_EMAIL = core["DEFAULT_FROM_EMAIL"]
SERVER_EMAIL = DEFAULT_FROM_EMAIL

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": core["LOG_LEVEL"]},
    "loggers": {
        "botocore": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its "BEGIN" line at every start
    },
}

# --- Security: login rate limiting, Content-Security-Policy ----------------------------------
# django-axes: after this many failed logins for one username from one address (the login page
# and the admin's), that pair is locked out for this long; a success resets the count.
AXES_FAILURE_LIMIT = core["VIGIL_LOGIN_FAILURE_LIMIT"]
AXES_COOLOFF_TIME = timedelta(minutes=core["VIGIL_LOGIN_LOCKOUT_MINUTES"])
# Counted per username and address (an IPv6 address's /64), and per username across every
# address, which VIGIL_LOGIN_USER_FAILURE_LIMIT pauses (apps.accounts.lockout.LockoutHandler).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username"]
AXES_HANDLER = "apps.accounts.lockout.LockoutHandler"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "apps.accounts.lockout.lockout_response"  # a page, 429
AXES_CLIENT_IP_CALLABLE = "apps.accounts.lockout.lockout_address"
AXES_USERNAME_CALLABLE = "apps.accounts.lockout.lockout_username"  # allauth's form: "login"
# The client's address: VIGIL_PROXY_COUNT (apps/lib/conf.py, apps/lib/clientip.py).
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


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Reads for everyone logged in; every write needs its model permission (403 first).
    "DEFAULT_PERMISSION_CLASSES": ["apps.accounts.permissions.RolePermissions"],
    "DEFAULT_SCHEMA_CLASS": "apps.api.schema.AutoSchema",
    # DRF's three, the JSON one answering 400 to a body nested deeper than Python's parser goes.
    "DEFAULT_PARSER_CLASSES": [
        "apps.lib.bodies.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
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
        "read": core["VIGIL_API_RATE_READ"],
        "write": core["VIGIL_API_RATE_WRITE"],
        "user_read": core["VIGIL_API_RATE_USER_READ"],
        "user_write": core["VIGIL_API_RATE_USER_WRITE"],
    },
    "EXCEPTION_HANDLER": "apps.api.errors.json_exception_handler",
}
# VIGIL_API_KEY_CACHE_SECONDS, VIGIL_API_KEYS_PER_USER, VIGIL_API_LIST_CACHE_SECONDS and
# VIGIL_TRIALS_AT_ONCE: apps/lib/conf.py.
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

# --- Prometheus (apps/prometheus), the outbound guard (apps/lib/outbound.py) ----------------
# VIGIL_METRICS_ALLOW and VIGIL_METRICS_CACHE_SECONDS; VIGIL_OUTBOUND_ALLOW_LOOPBACK ("auto",
# True or False), VIGIL_OUTBOUND_DENY and VIGIL_OUTBOUND_ALLOW: apps/lib/conf.py, checked there.

# --- Celery ----------------------------------------------------------------------------------
# Unset CELERY_BROKER_URL means the embedded broker: kombu's filesystem transport in var/,
# shared by the web server, the worker and beat. Production sets a Redis URL.
CELERY_BROKER_URL = core["CELERY_BROKER_URL"]
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
CELERY_TASK_TIME_LIMIT = core["CELERY_TASK_TIME_LIMIT"]
CELERY_TASK_SOFT_TIME_LIMIT = core["CELERY_TASK_SOFT_TIME_LIMIT"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_BEAT_SCHEDULE = {
    "dispatch-due-work": {
        "task": "apps.regions.tasks.dispatch",
        "schedule": core["VIGIL_DISPATCH_SECONDS"],
    },
    "alerts-sweep": {
        "task": "apps.alerts.tasks.sweep",
        "schedule": core["VIGIL_ALERT_SWEEP_SECONDS"],
    },
    "alerts-undeliverable": {"task": "apps.alerts.tasks.undeliverable", "schedule": 24 * 3600.0},
    "expire-history": {"task": "apps.regions.tasks.expire_history", "schedule": 3600.0},
}
# The retention of the grow-only history (apps/lib/retention.py), the alerts' and the demo
# mode's settings: apps/lib/conf.py.

# --- AWS -------------------------------------------------------------------------------------
AWS_ENDPOINT_URL = core["AWS_ENDPOINT_URL"] or None
AWS_MAX_ATTEMPTS = core["AWS_MAX_ATTEMPTS"]
AWS_CONNECT_TIMEOUT = core["AWS_CONNECT_TIMEOUT"]
AWS_READ_TIMEOUT = core["AWS_READ_TIMEOUT"]
# Amazon SES through django-anymail (production's EMAIL_BACKEND). Vigil retries sending itself,
# so boto3 tries each call only twice.
ANYMAIL = {
    "AMAZON_SES_CLIENT_PARAMS": {
        "region_name": core["AWS_SES_REGION"],
        **({"endpoint_url": AWS_ENDPOINT_URL} if AWS_ENDPOINT_URL else {}),
        "config": {"connect_timeout": 5, "read_timeout": 20, "retries": {"total_max_attempts": 2}},
    },
    "AMAZON_SES_CONFIGURATION_SET_NAME": core["AWS_SES_CONFIGURATION_SET"] or None,
}
