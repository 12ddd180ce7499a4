"""The operator dashboard: pages, htmx fragments, websocket consumers and their presenters.

- `views/` (`inbox`, `workflows`, `runs`, + `http` helpers), wired in `urls`.
- `live/`: websocket `consumers`, wired in `routing` (`wfapp.asgi` adds the origin check and
  authentication), their client `frames`, and socket closing at `logout`.
- `graph/`: the workflow graph as inline SVG.
- `run_state`: node statuses, state and timeline entries folded from a run's events (pure).
- `queries`: every read, with the permission filter (`answerable`) pages, sockets and the API share.
- `presenter`: view models and the live fragments sockets send; `transcripts`: agents' conversations.
The JSON-Schema forms are `wfapp.schema_forms`. Business actions are `wfapp.runs` calls;
nothing here writes to the database itself.

May import: `wfapp.notify`, `wfapp.worker`, `wfapp.runs` and below; the API builds on its reads.
"""
