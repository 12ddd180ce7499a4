"""Durability: recorded model responses replay; the model is never asked again for a recorded step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow, tool

from . import agent_app
from .scripts import Script, call, text

ROOT = Path(__file__).resolve().parents[3]


@tool(requires_approval=True)
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


def mailer(script: Script, instruction: str = "Write emails.") -> Workflow:
    agent = LlmAgent(name="mailer", model=script.model, instruction=instruction, tools=[send_email])
    return Workflow(name="wf", edges=[(START, agent)])


async def test_a_saved_log_resumes_elsewhere_without_asking_the_model_again() -> None:
    store = InMemoryEventStore()
    first = Script(call("send_email", {"to": "ann@example.com", "body": "hi"}))
    waiting = await Runner(mailer(first), store=store).run("email ann")
    saved = json.loads(json.dumps(store.dump(waiting.session_id)))  # the log as JSON, nothing else

    later = Script(text("Sent."))  # a fresh process: its model knows only the last step
    runner = Runner(mailer(later), store=InMemoryEventStore.load(saved))
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})

    assert done.output == "Sent."
    assert (first.calls, later.calls) == (1, 1)
    assert later.requests[0][-1].parts[0].content == "sent to ann@example.com"


async def test_reading_a_finished_run_again_never_calls_the_model(store: InMemoryEventStore) -> None:
    script = Script(call("send_email", {"to": "bo@example.com", "body": "yo"}), text("Done."))
    runner = Runner(mailer(script), store=store)
    waiting = await runner.run("email bo")
    await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert script.calls == 2

    replayed = await runner.result(waiting.session_id)
    assert replayed.output == "Done." and script.calls == 2


async def test_a_changed_workflow_fails_clearly_instead_of_diverging(store: InMemoryEventStore) -> None:
    script = Script(call("send_email", {"to": "cy@example.com", "body": "x"}), text("never"))
    waiting = await Runner(mailer(script), store=store).run("email cy")

    changed = Runner(mailer(Script(text("never")), instruction="Write poems."), store=store)
    failed = await changed.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})

    assert failed.status == "failed"
    assert "no longer matches" in (failed.error or "") and "model step 1" in (failed.error or "")


def _wait_for(condition: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _steps_done(path: Path) -> set[str]:
    try:
        events = json.loads(path.read_text())["events"]
    except (FileNotFoundError, json.JSONDecodeError):
        return set()
    return {e["node_path"] for e in events if e["kind"] == "completed"}


@pytest.fixture(autouse=True)
def fresh_tool_runs() -> None:
    agent_app.TOOL_RUNS.clear()


async def test_a_process_killed_mid_loop_resumes_from_the_log(tmp_path: Path) -> None:
    log_file = tmp_path / "log.json"
    process = subprocess.Popen(
        [sys.executable, str(Path(agent_app.__file__)), str(log_file)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        # Two model steps and both tool calls are committed; the third model request hangs.
        _wait_for(lambda: "fruit@1/planner@1/stock@2.1" in _steps_done(log_file), "the second tool call")
        _wait_for(log_file.with_suffix(".asked").exists, "the third model request")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()

    saved = json.loads(log_file.read_text())
    store = InMemoryEventStore.load(saved)
    calls: list[int] = []
    model = agent_app.scripted(hang=False)
    original = model.function
    assert original is not None

    def counted(messages: Any, info: Any) -> Any:
        calls.append(1)
        return original(messages, info)

    model.function = counted
    result = await Runner(agent_app.planner(model), store=store).advance(saved["session_id"])

    assert result.status == "completed", result.error
    assert result.output == "8 fruit"
    assert len(calls) == 1  # only the step that was in flight; the two recorded ones replayed
    assert agent_app.TOOL_RUNS == []  # completed tool calls never run again


def _reordered(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order (as PostgreSQL's jsonb may return it)."""
    if isinstance(value, dict):
        return {key: _reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(item) for item in value]
    return value


async def test_a_log_read_back_with_keys_reordered_still_replays() -> None:
    store = InMemoryEventStore()

    def lookup(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        return {"order_id": order_id, "total": 12.5, "items": ["kettle"]}

    def flow(script: Script) -> Workflow:
        agent = LlmAgent(
            name="clerk", model=script.model, instruction="Help {customer}.", tools=[lookup, send_email]
        )
        return Workflow(name="wf", edges=[(START, agent)])

    first = Script(
        call("lookup", {"order_id": "A1"}), call("send_email", {"to": "ann@example.com", "body": "ok"})
    )
    ticket = {"customer": "Ann", "order_id": "A1", "note": "please"}
    waiting = await Runner(flow(first), store=store).run(ticket)
    saved = _reordered(json.loads(json.dumps(store.dump(waiting.session_id))))

    later = Script(text("Done."))
    runner = Runner(flow(later), store=InMemoryEventStore.load(saved))
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert done.status == "completed", done.error
    assert (first.calls, later.calls) == (2, 1)


def _clerk(script: Script, looked: list[str], instruction: str = "Help {customer}.") -> Workflow:
    def lookup(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        looked.append(order_id)
        return {"order_id": order_id, "total": 12.5}

    agent = LlmAgent(name="clerk", model=script.model, instruction=instruction, tools=[lookup, send_email])
    return Workflow(name="wf", edges=[(START, agent)])


# Recorded by the version whose model steps kept a fingerprint of the request instead of a
# digest of the tools: a lookup, then a send_email call waiting for approval.
_OLD_LOG = Path(__file__).with_name("log_with_fingerprints.json")


async def test_a_log_recorded_with_request_fingerprints_still_replays() -> None:
    saved = json.loads(_OLD_LOG.read_text())
    assert all(
        "fingerprint" in e["output"] for e in saved["events"] if "/model@" in e["node_path"] and "output" in e
    )
    store = InMemoryEventStore.load(saved)
    later, looked = Script(text("Done.")), []
    runner = Runner(_clerk(later, looked), store=store)
    pending = (await runner.result(saved["session_id"])).interrupts[0].id

    done = await runner.resume(saved["session_id"], {pending: {"approved": True}})

    assert done.status == "completed", done.error
    assert done.output == "Done." and later.calls == 1  # the two recorded steps were not asked again
    assert later.last_parts(1)[0].content == "sent to ann@example.com"
    assert looked == []  # the recorded tool call did not run again


async def test_a_changed_workflow_fails_clearly_on_a_log_with_request_fingerprints() -> None:
    saved = json.loads(_OLD_LOG.read_text())
    later = Script(text("Done."))
    runner = Runner(_clerk(later, [], "Help {customer} kindly."), store=InMemoryEventStore.load(saved))
    pending = (await runner.result(saved["session_id"])).interrupts[0].id

    failed = await runner.resume(saved["session_id"], {pending: {"approved": True}})

    assert failed.status == "failed" and later.calls == 0
    assert "no longer matches this workflow at model step 1" in str(failed.error)
