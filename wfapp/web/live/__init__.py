"""Live pages over websockets: `consumers` (wired in `routing`), the strict client `frames` they
parse, and `logout`, which closes a session's sockets when it logs out."""
