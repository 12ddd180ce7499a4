"""The JSON API (``/api/v1/``, django-ninja): the dashboard's actions for other systems.

Routers per resource call the same actions (``wfapp.runs``) and queries (``wfapp.web.queries``)
as the pages; errors are RFC 9457 problem documents; API tokens and idempotency records are
models in ``wfapp.models.tokens``.

May import: ``wfapp.web`` and below.
"""
