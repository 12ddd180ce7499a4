"""Fixtures for the Django side: real commits, and no connection left open in worker threads."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from asgiref.sync import sync_to_async
from django.db import connections


@pytest.fixture(autouse=True)
async def _close_thread_connections() -> AsyncIterator[None]:
    """Close the connections opened by ``sync_to_async`` so test databases can be dropped."""
    yield
    await sync_to_async(connections.close_all)()
