"""System checks of the notification settings: webhooks only to http(s) URLs, never unsigned
(each URL has its own secret or the shared one)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks


@checks.register("wfapp")
def check_webhooks(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    problems: list[checks.CheckMessage] = []
    urls = list(settings.WFAPP_WEBHOOK_URLS)
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(
                checks.Error(
                    f"WFAPP_WEBHOOK_URLS: {url!r} is not an http(s) URL",
                    hint="List full addresses such as https://hooks.example.com/wfapp, separated by commas.",
                    id="wfapp.E101",
                )
            )
    unsigned = [url for url in urls if not dict(settings.WFAPP_WEBHOOK_SECRETS).get(url)]
    if unsigned and not settings.WFAPP_WEBHOOK_SECRET:
        problems.append(
            checks.Error(
                f"WFAPP_WEBHOOK_URLS has {', '.join(unsigned)} without a secret in WFAPP_WEBHOOK_SECRETS, "
                "and WFAPP_WEBHOOK_SECRET is not set: webhooks are never sent unsigned",
                hint="Set WFAPP_WEBHOOK_SECRET (or one secret per URL in WFAPP_WEBHOOK_SECRETS) to a long "
                "random string the receivers verify signatures with.",
                id="wfapp.E102",
            )
        )
    return problems
