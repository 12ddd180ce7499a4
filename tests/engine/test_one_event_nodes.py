"""A plain function node that nobody watches live is one ``completed`` event in the log."""

from __future__ import annotations

from typing import Any

from engine import (
    START,
    Event,
    FunctionNode,
    InMemoryEventStore,
    RequestInput,
    Runner,
    Workflow,
    replay_check,
)


class WatchedStore(InMemoryEventStore):
    """A store that passes notes on to live pages, as the dashboard's does."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[dict[str, Any]] = []

    async def publish(self, session_id: str, node_path: str, note: dict[str, Any]) -> None:
        self.notes.append(note)


def inc(node_input: int) -> int:
    return node_input + 1


def chain() -> Workflow:
    return Workflow(name="wf", edges=[(START, FunctionNode(inc, name="a"), FunctionNode(inc, name="b"))])


def shape(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind, e.node_path) for e in events]


async def test_each_plain_node_writes_its_completed_alone_with_where_it_began() -> None:
    store = InMemoryEventStore()
    result = await Runner(chain(), store=store).run(0)
    events = await store.list_events(result.session_id)

    assert result.output == 2
    assert shape(events) == [
        ("started", "wf@1"),
        ("completed", "wf@1/a@1"),
        ("completed", "wf@1/b@1"),
        ("completed", "wf@1"),
        ("status", "wf@1"),
    ]
    a, b = events[1], events[2]
    # Where the log stood when each was decided: nothing committed yet for a (the workflow's
    # start was still queued), a's event for b.
    assert (a.output, a.seen_seq) == (1, 0)
    assert (b.output, b.seen_seq) == (2, 2)
    assert events[3].seen_seq is None  # the workflow itself has its started
    assert replay_check(chain(), events).replays


async def test_a_watched_run_shows_each_node_starting() -> None:
    store = WatchedStore()
    result = await Runner(chain(), store=store).run(0)
    events = await store.list_events(result.session_id)

    assert shape(events)[:5] == [
        ("started", "wf@1"),
        ("started", "wf@1/a@1"),
        ("completed", "wf@1/a@1"),
        ("started", "wf@1/b@1"),
        ("completed", "wf@1/b@1"),
    ]
    assert all(e.seen_seq is None for e in events if e.kind == "completed")


async def test_a_plain_node_that_asks_tells_or_fails_starts_first() -> None:
    def asks(node_input: int) -> RequestInput:
        return RequestInput(interrupt_id="q", message="go on?")

    def tells(node_input: int) -> Event:
        return Event(output=node_input, message="done it")

    def fails(node_input: int) -> int:
        raise RuntimeError("no")

    store = InMemoryEventStore()
    for fn in (asks, tells, fails):
        wf = Workflow(name="wf", edges=[(START, FunctionNode(fn, name="n"))])
        result = await Runner(wf, store=store).run(1)
        kinds = [e.kind for e in await store.list_events(result.session_id) if e.node_path == "wf@1/n@1"]
        assert kinds == {"asks": ["started", "interrupt"], "tells": ["started", "output", "completed"],
                         "fails": ["started", "error"]}[fn.__name__]  # fmt: skip


async def test_a_one_event_log_resumes_without_running_its_nodes_again() -> None:
    ran: list[int] = []

    def counted(node_input: int) -> int:
        ran.append(node_input)
        return node_input + 1

    def ask(node_input: int) -> Any:
        yield RequestInput(interrupt_id="q", message=f"at {node_input}")

    def build() -> Workflow:
        return Workflow(
            name="wf", edges=[(START, FunctionNode(counted, name="a"), FunctionNode(ask, name="ask"))]
        )

    store = InMemoryEventStore()
    first = await Runner(build(), store=store).run(0)
    # A process that reads the log afresh (saved and loaded, as after a restart).
    reloaded = InMemoryEventStore.load(store.dump(first.session_id))
    result = await Runner(build(), store=reloaded).resume(first.session_id, {"q": "yes"})

    assert (result.status, result.output) == ("completed", "yes")
    assert ran == [0]
