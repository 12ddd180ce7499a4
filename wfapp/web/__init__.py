"""The operator dashboard: pages, htmx fragments, websocket consumers and their presenters.

- `schema_form` (with `schema_resolve`, `schema_widgets`, `schema_values`, `schema_errors`):
  JSON Schema -> widgets -> validated JSON, and `bulk_decision`.
- `graph_layout` / `graph_svg`: the workflow graph as inline SVG.
- `run_state`: node statuses, state and timeline entries folded from a run's events (pure).
- `queries`: every read, with the permission filter (`answerable`) pages and sockets share.
- `presenter`: view models and the live fragments sockets send.
- `views_inbox`, `views_workflows`, `views_runs` (+ `http` helpers), wired in `urls`.
- `consumers`, wired in `routing` (`wfapp.asgi` adds the origin check and authentication).
Business actions are `wfapp.services` calls; nothing here writes to the database itself.
"""
