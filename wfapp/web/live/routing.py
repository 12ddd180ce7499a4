"""Websocket routes; `wfapp.asgi` wraps them in the origin check and session authentication."""

from __future__ import annotations

from django.urls import path

from wfapp.web.live import consumers

websocket_urlpatterns = [
    path("ws/nav/", consumers.NavConsumer.as_asgi()),
    path("ws/inbox/", consumers.InboxConsumer.as_asgi()),
    path("ws/runs/", consumers.RunsConsumer.as_asgi()),
    path("ws/interrupts/<int:pk>/", consumers.QuestionConsumer.as_asgi()),
    path("ws/runs/<str:session_id>/", consumers.RunConsumer.as_asgi()),
]
