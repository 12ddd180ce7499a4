"""The operator dashboard: pages, htmx fragments, websocket consumers and their presenters."""
