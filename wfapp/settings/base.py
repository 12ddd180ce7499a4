"""Settings shared by both profiles. Everything comes from the environment with safe defaults."""

from __future__ import annotations

import os
from pathlib import Path

from django.utils.csp import CSP

from wfapp.settings.environment import (
    channel_layers,
    database,
    env_bool,
    env_list,
    env_secrets,
    lease_seconds,
    runtime_mode,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(os.environ.get("WFAPP_DATA_DIR", BASE_DIR / "var")).resolve()

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "ninja",  # the API docs page's Swagger UI files, served locally (never from a CDN)
    "wfapp",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "wfapp.web.viewer_zone.ViewerZoneMiddleware",  # times in the viewer's zone (a cookie from the browser)
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "wfapp.web.session_expiry.LoginRequiredMiddleware",  # htmx requests go to login whole
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]

ROOT_URLCONF = "wfapp.urls"
ASGI_APPLICATION = "wfapp.asgi.application"

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
            ],
        },
    },
]

DATABASES = {"default": database(DATA_DIR / "wfapp.sqlite3")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # procrastinate's job tables (scaled mode) and their admin pages exist on PostgreSQL only.
    INSTALLED_APPS.append("procrastinate.contrib.django")
PROCRASTINATE_IMPORT_PATHS = ["wfapp.worker.tasks", "wfapp.worker.deadlines", "wfapp.worker.notify_tasks"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
CHANNEL_LAYERS = channel_layers()

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out username and address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []

# Requests larger than this are refused before they are parsed (answers and start forms are small).
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024
# `manage.py serve` refuses a request body past this many bytes while reading it (413, then it
# closes the connection), chunked or not: before any authentication or parsing.
WFAPP_MAX_REQUEST_BYTES = int(os.environ.get("WFAPP_MAX_REQUEST_BYTES", str(512 * 1024)))
# Daphne applies the message limit to what it sends as well: a live update (a run's backlog
# comes in batches that fit) may be larger than anything a page sends (a hello of 4 KB at most).
# How often each live socket checks that it still hears its doorbells (``wfapp.web.live.behind``).
WFAPP_LIVE_CHECK_SECONDS = float(os.environ.get("WFAPP_LIVE_CHECK_SECONDS", "10"))
DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE = 1024 * 1024
DAPHNE_WEBSOCKET_MAX_FRAME_SIZE = 64 * 1024

# Registered workflows, as "module:attribute"; WFAPP_EXTRA_WORKFLOWS adds more without editing code.
WFAPP_WORKFLOWS = [
    "wfapp.demos.expense_approval:expense_approval",
    "wfapp.demos.document_review:document_review",
    "wfapp.demos.batch_review:batch_review",
    "wfapp.demos.support_triage:support_triage",
    *env_list("WFAPP_EXTRA_WORKFLOWS"),
]
# Four-eyes by default: the run's requester may not answer its approval questions (a boolean
# `approved` field) unless the question says `exclude_requester=False`. The workflows named
# here let their requesters approve their own runs (a question's `exclude_requester=True` still
# keeps them out).
WFAPP_REQUESTER_MAY_APPROVE = env_list("WFAPP_REQUESTER_MAY_APPROVE")
# "embedded": runs execute in the serving (or CLI) process; "workers": in `manage.py wf worker`
# processes, handed out as procrastinate jobs (PostgreSQL only; see wfapp/worker/).
WFAPP_RUNTIME = runtime_mode()
# Execute runs inside the serving process (the embedded mode); 0 when separate workers do it.
WFAPP_EMBEDDED_RUNTIME = env_bool("WFAPP_EMBEDDED_RUNTIME", WFAPP_RUNTIME == "embedded")
# A stopping worker lets its runs' turns finish this long, then cuts them and hands them back.
WFAPP_WORKER_GRACE_SECONDS = float(os.environ.get("WFAPP_WORKER_GRACE_SECONDS", "20"))
# A worker holds a run's lease this long without renewing it; it renews every third of it.
WFAPP_LEASE_SECONDS = lease_seconds()
# How often the runtime looks for runs that need taking up (crashed owners, answers given offline).
WFAPP_SWEEP_SECONDS = float(os.environ.get("WFAPP_SWEEP_SECONDS", "5"))
# On PostgreSQL the runtime's stores commit in this many threads (each run keeps to one of them,
# so its operations stay in order); on SQLite, one writer at a time, always one.
WFAPP_STORE_THREADS = int(os.environ.get("WFAPP_STORE_THREADS", "4"))
# Answers and start inputs larger than this (in bytes of JSON) are refused before parsing.
WFAPP_MAX_ANSWER_BYTES = int(os.environ.get("WFAPP_MAX_ANSWER_BYTES", str(64 * 1024)))
# Live streams (the API's SSE) one user may hold open at once in one process (429 beyond).
WFAPP_MAX_STREAMS_PER_USER = int(os.environ.get("WFAPP_MAX_STREAMS_PER_USER", "8"))
# How long the API remembers an Idempotency-Key's first result (the sweeps purge older ones).
WFAPP_IDEMPOTENCY_HOURS = float(os.environ.get("WFAPP_IDEMPOTENCY_HOURS", "24"))
# How deep any value written to the event log may nest (at most 190: the log's readers refuse deeper).
# Seconds between the checks an open live channel (websocket, SSE stream) makes of its session,
# its user and their rights while no update goes out (each update checks too); it closes when they end.
WFAPP_LIVE_RECHECK_SECONDS = float(os.environ.get("WFAPP_LIVE_RECHECK_SECONDS", "5"))
# Days a new API token lasts unless its creator picks another expiry (0: tokens never expire).
# How long an answer from the inbox's a / r keys or its bulk bar waits for Undo before it is sent.
WFAPP_UNDO_SECONDS = float(os.environ.get("WFAPP_UNDO_SECONDS", "5"))
WFAPP_API_TOKEN_DAYS = int(os.environ.get("WFAPP_API_TOKEN_DAYS", "90"))
WFAPP_MAX_JSON_DEPTH = int(os.environ.get("WFAPP_MAX_JSON_DEPTH", "64"))

# Notifications (wfapp.notify): mail through Django's email framework (the console in embedded
# mode; SMTP when EMAIL_HOST is set, or any backend through WFAPP_EMAIL_BACKEND), webhooks to the
# URLs listed here only (never from workflow input), HMAC-signed with WFAPP_WEBHOOK_SECRET.
_SMTP_HOST = os.environ.get("EMAIL_HOST", "")
MAILERS = {
    "default": {
        "BACKEND": os.environ.get(
            "WFAPP_EMAIL_BACKEND",
            "django.core.mail.backends.smtp.EmailBackend"
            if _SMTP_HOST
            else "django.core.mail.backends.console.EmailBackend",
        ),
        "OPTIONS": {
            "host": _SMTP_HOST,
            "port": int(os.environ.get("EMAIL_PORT", "25")),
            "username": os.environ.get("EMAIL_HOST_USER", ""),
            "password": os.environ.get("EMAIL_HOST_PASSWORD", ""),
            "use_tls": env_bool("EMAIL_USE_TLS"),
            "timeout": 10,
        }
        if _SMTP_HOST
        else {},
    }
}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "wfapp@localhost")
WFAPP_NOTIFY_EMAIL = env_bool("WFAPP_NOTIFY_EMAIL", True)
WFAPP_WEBHOOK_URLS = env_list("WFAPP_WEBHOOK_URLS")
WFAPP_WEBHOOK_SECRET = os.environ.get("WFAPP_WEBHOOK_SECRET", "")
# Per-URL secrets, a JSON object {"<url>": "<secret>"}: a URL listed here is signed with its own.
WFAPP_WEBHOOK_SECRETS = env_secrets("WFAPP_WEBHOOK_SECRETS")
WFAPP_WEBHOOK_TIMEOUT = float(os.environ.get("WFAPP_WEBHOOK_TIMEOUT", "5"))
# A delivery that fails is tried again after 1, 2, 4, ... times this, this many times in all.
WFAPP_NOTIFY_ATTEMPTS = int(os.environ.get("WFAPP_NOTIFY_ATTEMPTS", "6"))
WFAPP_NOTIFY_BACKOFF_SECONDS = float(os.environ.get("WFAPP_NOTIFY_BACKOFF_SECONDS", "2"))
# How often notices are collected and due deliveries sent (the runtime, or a worker's periodic job).
WFAPP_NOTIFY_SECONDS = float(os.environ.get("WFAPP_NOTIFY_SECONDS", "2"))
WFAPP_DIGEST_MINUTES = float(os.environ.get("WFAPP_DIGEST_MINUTES", "60"))
# The dashboard's address as the mails' links spell it.
WFAPP_BASE_URL = os.environ.get("WFAPP_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
# Signed single-use answer links in question mails (wfapp.runs.answer_links): off unless enabled.
WFAPP_ANSWER_LINKS = env_bool("WFAPP_ANSWER_LINKS")
WFAPP_ANSWER_LINK_HOURS = float(os.environ.get("WFAPP_ANSWER_LINK_HOURS", "72"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # Django logs the path of every 4xx/5xx response: an answer link's token is not written out.
    "filters": {"answer_links": {"()": "wfapp.web.log_redaction.RedactAnswerLinks"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "wfapp": {"handlers": ["console"], "level": os.environ.get("WFAPP_LOG_LEVEL", "INFO")},
        "django": {"handlers": ["console"], "level": "WARNING"},
        "django.request": {"filters": ["answer_links"]},
        "django.server": {"filters": ["answer_links"]},
        "procrastinate": {
            "handlers": ["console"],
            "level": os.environ.get("WFAPP_QUEUE_LOG_LEVEL", "WARNING"),
        },
    },
}

# Login throttling (django-axes; both the dashboard's and the admin's login; wfapp.web.login_throttle):
# failures count for the cool-off; this many for one username from one address lock that pair out,
# this many from one address lock the address out, and past the first limit one username's
# attempts from anywhere wait a delay that doubles per failure, up to the maximum.
WFAPP_LOGIN_FAILURE_LIMIT = int(os.environ.get("WFAPP_LOGIN_FAILURE_LIMIT", "5"))
WFAPP_LOGIN_COOLOFF_MINUTES = float(os.environ.get("WFAPP_LOGIN_COOLOFF_MINUTES", "15"))
WFAPP_LOGIN_ADDRESS_LIMIT = int(os.environ.get("WFAPP_LOGIN_ADDRESS_LIMIT", "20"))
WFAPP_LOGIN_DELAY_SECONDS = float(os.environ.get("WFAPP_LOGIN_DELAY_SECONDS", "2"))
WFAPP_LOGIN_MAX_DELAY_SECONDS = float(os.environ.get("WFAPP_LOGIN_MAX_DELAY_SECONDS", "300"))
# How many proxies in front of the server append to X-Forwarded-For (the client's address is the
# entry that many from the end); 0: the header is ignored. WFAPP_BEHIND_PROXY=1 means one.
WFAPP_PROXY_COUNT = int(os.environ.get("WFAPP_PROXY_COUNT", "1" if env_bool("WFAPP_BEHIND_PROXY") else "0"))
AXES_HANDLER = "wfapp.web.login_throttle.LoginThrottle"
AXES_FAILURE_LIMIT = "wfapp.web.login_throttle.failure_limit"
AXES_COOLOFF_TIME = "wfapp.web.login_throttle.cool_off"
AXES_CLIENT_IP_CALLABLE = "wfapp.web.login_throttle.client_address"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = (
    False  # a refused attempt is not a failure: no lock grows by it
)
AXES_LOCKOUT_CALLABLE = "wfapp.web.login_throttle.refused"

# Content-Security-Policy (both profiles): scripts, styles and sockets from this site only. No
# page has an inline script, handler or style attribute, and htmx runs without eval or its
# injected indicator styles (base.html's htmx-config), so nothing needs 'unsafe-inline'.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],  # same-origin ws:// and wss:// included
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
