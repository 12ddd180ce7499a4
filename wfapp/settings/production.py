"""The production profile: secrets and hosts from the environment, HTTPS only.

Required: ``SECRET_KEY``, ``ALLOWED_HOSTS`` (comma-separated). Optional: ``DATABASE_URL``,
``REDIS_URL``, ``CSRF_TRUSTED_ORIGINS``, ``WFAPP_BEHIND_PROXY=1`` (trust X-Forwarded-Proto, and
the last X-Forwarded-For entry as the client's address for login throttling; more proxies:
``WFAPP_PROXY_COUNT``), ``WFAPP_SSL_REDIRECT=0`` when the proxy already redirects. Mail goes out by SMTP (``EMAIL_HOST``,
localhost unless set; ``WFAPP_EMAIL_BACKEND`` picks another backend), never to the console.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from wfapp.settings.base import *  # noqa: F403
from wfapp.settings.base import DATA_DIR, MAILERS
from wfapp.settings.environment import env_bool, env_list


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(f"The production profile needs the environment variable {name}.")
    return value


DEBUG = False
SECRET_KEY = _required("SECRET_KEY")
ALLOWED_HOSTS = [host.strip() for host in _required("ALLOWED_HOSTS").split(",") if host.strip()]
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
if "WFAPP_EMAIL_BACKEND" not in os.environ and not os.environ.get("EMAIL_HOST"):
    # The console backend is for embedded mode only: a production server sends its mail.
    MAILERS["default"] = {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {"host": "localhost", "port": int(os.environ.get("EMAIL_PORT", "25")), "timeout": 10},
    }

SECURE_SSL_REDIRECT = env_bool("WFAPP_SSL_REDIRECT", True)
if env_bool("WFAPP_BEHIND_PROXY"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = int(os.environ.get("WFAPP_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

STATIC_ROOT = Path(os.environ.get("WFAPP_STATIC_ROOT", DATA_DIR / "static"))  # for collectstatic
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
