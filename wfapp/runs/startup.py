"""Start the embedded runtime from the first ASGI connection, for servers other than ``serve``.

``manage.py serve`` starts the runtime itself when the server starts. Under any other ASGI
server (``daphne wfapp.asgi:application``, Channels' live-server tests, ``runserver``) there is
no startup hook (Daphne has no lifespan), so the first HTTP request starts the
runtime in the server's event loop. ``WFAPP_EMBEDDED_RUNTIME=0`` turns this off (for a
deployment whose runs execute in separate worker processes).
"""

from __future__ import annotations

import asyncio
from typing import Any

from django.conf import settings

from wfapp.runs import runtime


class StartRuntime:
    """ASGI wrapper: make sure the process's runtime runs once the first request comes in."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self._checked = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if not self._checked and scope["type"] == "http":
            self._checked = True
            engine = runtime.current()
            if settings.WFAPP_EMBEDDED_RUNTIME and not engine.running:
                task = asyncio.get_running_loop().create_task(engine.start())
                task.add_done_callback(runtime.log_failure)
        return await self.application(scope, receive, send)
