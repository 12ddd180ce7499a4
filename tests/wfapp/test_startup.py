"""Under an ASGI server other than ``serve``, the first connection starts the runtime."""

from __future__ import annotations

from channels.testing import HttpCommunicator

from tests.wfapp.helpers import embedded_only, settled
from wfapp.runs import runtime, starting
from wfapp.runs.runtime import Runtime


@embedded_only(
    "the serving process's own runtime starts on its first request; in workers mode it executes "
    "nothing (tests/scaled starts worker processes)"
)
async def test_first_request_starts_the_runtime_which_takes_up_waiting_work(
    transactional_db: None, workflows: None
) -> None:
    from wfapp.asgi import application

    fresh = Runtime()
    runtime.install(fresh)
    try:
        session_id, _ = await starting.create_run("approval", {"n": 1})  # recorded; nobody executes it yet
        assert not fresh.running
        request = HttpCommunicator(application, "GET", "/login/", headers=[(b"host", b"127.0.0.1")])
        response = await request.get_response(timeout=60)  # the runtime starts first
        assert response["status"] == 200
        assert fresh.running
        await settled(session_id, "waiting")  # the start-up sweep took it up
    finally:
        await fresh.stop()
        runtime.install(None)
