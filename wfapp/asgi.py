"""The ASGI application: Django for HTTP, the dashboard's consumers for websockets.

Websockets pass the origin check and the session authentication before any consumer; the
consumers live in ``wfapp.web.live.routing.websocket_urlpatterns`` when the dashboard provides it.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wfapp.settings.embedded")
django_application = get_asgi_application()  # sets Django up before the imports below

from importlib.util import find_spec  # noqa: E402

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from wfapp.runs.startup import StartRuntime  # noqa: E402


def _websocket_urlpatterns() -> list[object]:
    try:
        if find_spec("wfapp.web.live.routing") is None:
            return []
    except ModuleNotFoundError:
        return []
    from wfapp.web.live.routing import websocket_urlpatterns

    return list(websocket_urlpatterns)


application = StartRuntime(
    ProtocolTypeRouter(
        {
            "http": django_application,
            "websocket": AllowedHostsOriginValidator(
                AuthMiddlewareStack(URLRouter(_websocket_urlpatterns()))
            ),
        }
    )
)
