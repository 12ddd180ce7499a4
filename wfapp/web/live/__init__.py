"""Live pages over websockets: `consumers` (wired in `routing`), the strict client `frames` they
parse, `model_text`, the text models stream to a run page (never stored), and `logout`, which
closes a session's sockets when it logs out."""
