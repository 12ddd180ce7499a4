"""The whole suite runs offline: pydantic-ai refuses any model request but its test models' (ALLOW_MODEL_REQUESTS).

Passwords that tests set are hashed with a fast hasher (PBKDF2 took up to seconds a user).

Under pytest-xdist (``make test`` runs ``-n``) each worker process has its own test databases
(SQLite files and PostgreSQL databases are named after the process) and, here, its own Redis
key prefix, so that one worker's channel groups and doorbells never reach another's pages.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pydantic_ai import models


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    # Django's advice for test suites: a fast hasher for the passwords tests set (every fixture
    # user has one). PBKDF2's 1.2 million rounds cost up to seconds a user on a loaded machine;
    # passwords stored with it still check. Servers that tests start keep the real settings.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    # The servers and commands that tests start inherit it, and so share the worker's groups.
    prefix = os.environ["WFAPP_REDIS_PREFIX"] = f"{os.environ.get('WFAPP_REDIS_PREFIX', 'wfapp')}-{worker}"
    layer = settings.CHANNEL_LAYERS.get("default", {})
    if "prefix" in layer.get("CONFIG", {}):  # channels-redis (REDIS_URL): groups are Redis keys
        layer["CONFIG"]["prefix"] = prefix


@pytest.fixture(autouse=True)
def no_model_requests() -> Iterator[None]:
    with models.override_allow_model_requests(False):
        yield
