"""The default profile: one process on 127.0.0.1, SQLite, the in-memory channel layer.

``DATABASE_URL`` and ``REDIS_URL`` still switch to PostgreSQL and channels-redis.
"""

from __future__ import annotations

import os

from wfapp.settings.base import *  # noqa: F403
from wfapp.settings.base import DATA_DIR
from wfapp.settings.environment import env_bool, env_list
from wfapp.settings.secret_key import load_or_create

DEBUG = env_bool("WFAPP_DEBUG")
SECRET_KEY = os.environ.get("SECRET_KEY") or load_or_create(DATA_DIR / "secret_key")
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", *env_list("ALLOWED_HOSTS")]

# Serve static files straight from the app and project folders: no collectstatic step needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
