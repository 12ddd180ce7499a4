"""Logging out closes the sockets of that login session, so an open tab stops receiving questions.

Every live socket joins ``login_group(session_key)``; ``user_logged_out`` (the logout page, the
admin's, ``logout()`` anywhere) sends ``{"type": "wfapp.logout"}`` there before the session is
flushed. The group name holds a hash of the session key, never the key itself.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver

logger = logging.getLogger(__name__)

LOGOUT_TYPE = "wfapp.logout"
LOGGED_OUT = 4401  # the close code a logged-out page's socket gets


def login_group(session_key: str) -> str:
    """The group of every socket opened with this session."""
    return "wfapp.login." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


@receiver(user_logged_out, dispatch_uid="wfapp-close-sockets-on-logout")
def close_sockets(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """Tell the sockets of the session that is logging out to close."""
    session = getattr(request, "session", None)
    key = getattr(session, "session_key", None)
    layer = get_channel_layer()
    if not key or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(login_group(key), {"type": LOGOUT_TYPE})
    except Exception:
        # The logout itself goes on: the session is flushed, so a reconnecting socket is refused.
        logger.warning("could not close the sockets of a logged-out session", exc_info=True)
