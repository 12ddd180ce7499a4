"""The JSON API (``/api/v1/``, django-ninja): the dashboard's actions for other systems.

Routers per resource call the same services and queries as the pages; errors are RFC 9457
problem documents; API tokens and idempotency records are this package's models.
"""
