"""What a running node sees: its ``Context`` and the delta-tracking ``State``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, MutableMapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import NodeUsageError, RuleViolation
from .events import ErrorInfo
from .limits import check_value, safe_text
from .state_schema import check_state_entry
from .tracebacks import formatted
from .values import fresh
from .writer import draft

if TYPE_CHECKING:
    from .execution import SessionRun
    from .nodes import BaseNode


_NO_DELTA: dict[str, Any] = {}  # most nodes write no state: they share this until the first write


class State(MutableMapping[str, Any]):
    """Session state as one node sees it: committed values plus its own pending writes.

    Writes are kept as a delta and ride on the node's next event; other nodes see them
    once that event is committed. Keys cannot be deleted (set them to ``None``).
    """

    __slots__ = ("_base", "_delta")

    schema: type[BaseModel] | None = None  # the state_schema writes are checked against (CheckedState)

    def __init__(self, base: dict[str, Any]) -> None:
        self._base = base
        self._delta = _NO_DELTA

    def __getitem__(self, key: str) -> Any:
        delta = self._delta
        if key in delta:
            return delta[key]
        return self._base[key]

    def __setitem__(self, key: str, value: Any) -> None:
        delta = self._delta
        if delta is _NO_DELTA:
            delta = self._delta = {}
        delta[key] = value

    def __delitem__(self, key: str) -> None:
        raise TypeError("state keys cannot be deleted; set the key to None instead")

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        yield from (key for key in self._delta if key not in self._base)

    def __len__(self) -> int:
        return len(self._base.keys() | self._delta.keys())

    def take_delta(self) -> dict[str, Any] | None:
        """Return and forget the writes not yet put on an event."""
        delta = self._delta
        if not delta:
            return None
        self._delta = _NO_DELTA
        return delta


class CheckedState(State):
    """``State`` under a ``state_schema``: each write is checked against it (``engine.state_schema``).

    A class of its own so that state without a schema (most of it) pays nothing for the check.
    """

    __slots__ = ("schema",)

    def __init__(self, base: dict[str, Any], schema: type[BaseModel]) -> None:
        super().__init__(base)
        self.schema = schema

    def __setitem__(self, key: str, value: Any) -> None:
        check_state_entry(self.schema, key, value)  # type: ignore[arg-type]
        super().__setitem__(key, value)


_NO_IDS: list[str] = []
_NO_TASKS: set[asyncio.Task[Any]] = set()
_NO_COUNTERS: dict[str, int] = {}


class Execution:
    """Engine bookkeeping for one execution of one node at one path.

    A plain class with a hand-written ``__init__``: one is made per node execution, and a
    dataclass's generated one, with its default factories, cost three times as much.
    """

    __slots__ = (
        "allocated",
        "attempt",
        "author",
        "begun",
        "child_failure",
        "counters",
        "delegated",
        "detached",
        "exited",
        "given",
        "has_output",
        "interrupts",
        "node",
        "output",
        "output_persisted",
        "output_seq",
        "path",
        "resume_inputs",
        "route",
        "route_pending",
        "spawned",
        "state",
        "targets",
        "task",
        "timed_out",
        "violation",
    )

    def __init__(
        self,
        node: BaseNode,
        path: str,
        author: str,
        targets: list[str],
        resume_inputs: dict[str, Any],
        state: State,
        timed_out: frozenset[str],
        given: Any,
    ) -> None:
        self.node = node
        self.path = path
        self.author = author
        self.targets = targets
        self.resume_inputs = resume_inputs
        self.state = state
        self.task: asyncio.Task[Any] | None = None  # where it runs, from its first step
        self.attempt = 1
        self.output: Any = None
        self.output_seq = 0  # the event carrying a delivered output (a delegate's, a terminal's)
        self.has_output = self.output_persisted = self.delegated = self.route_pending = False
        self.route: Any = None
        # Most executions ask nothing and run no children: these share one empty value until
        # the first write (add_interrupts, SessionRun), to keep a node's allocations low.
        self.interrupts: list[str] = _NO_IDS
        self.spawned: set[asyncio.Task[Any]] = _NO_TASKS
        self.detached: list[str] = _NO_IDS
        self.child_failure: BaseException | None = None  # a spawned child failed after the attempt ended
        self.violation: RuleViolation | None = None
        self.exited = False  # the attempt's body has ended; children may still be draining
        self.counters: dict[str, int] = _NO_COUNTERS
        self.allocated = 0  # children handed out by run_node
        self.begun = 0  # of those, how many started running
        self.timed_out = timed_out  # its questions whose deadline failed them (engine.human)
        self.given = given  # the input it was given (engine.asking: what its questions were asked on)

    def set_output(self, value: Any) -> None:
        if self.delegated:
            return  # a use_as_output child already gave this node its output
        if self.has_output:
            raise NodeUsageError(
                f"Node {self.path}: output already set. A node can produce at most one output."
            )
        self.output = self.node.check_output(value)
        self.has_output = True

    def violate(self, error: RuleViolation) -> RuleViolation:
        """Remember a broken rule; the execution fails with it whatever the node does next."""
        if self.violation is None:
            self.violation = error
        return error

    def deliver(self, value: Any, seq: int = 0) -> None:
        """Take an output that a child already persisted (in the event at ``seq``) as this node's."""
        self.output = value
        self.output_seq = seq
        self.has_output = self.output_persisted = True

    def add_interrupts(self, ids: list[str]) -> None:
        if self.interrupts is _NO_IDS:
            self.interrupts = []
        for interrupt_id in ids:
            if interrupt_id not in self.interrupts:
                self.interrupts.append(interrupt_id)

    def add_spawned(self, task: asyncio.Task[Any]) -> None:
        """A child of this execution runs in ``task`` (``asyncio.gather``, ``create_task``)."""
        if self.spawned is _NO_TASKS:
            self.spawned = set()
        self.spawned.add(task)

    def add_detached(self, path: str) -> None:
        """The child at ``path`` waits for input in a task of its own."""
        if self.detached is _NO_IDS:
            self.detached = []
        self.detached.append(path)

    def next_run_id(self, name: str) -> str:
        """The next automatic run id of a child named ``name``: 1, 2, ..."""
        if self.counters is _NO_COUNTERS:
            self.counters = {}
        number = self.counters[name] = self.counters.get(name, 0) + 1
        return str(number)

    def new_attempt(self) -> None:
        self.attempt += 1
        self.output = self.route = None
        self.output_seq = 0
        self.has_output = self.output_persisted = self.delegated = self.route_pending = False
        self.interrupts = self.detached = _NO_IDS
        self.child_failure = self.violation = None
        self.exited = False
        self.counters = _NO_COUNTERS
        self.allocated = self.begun = 0
        self.state.take_delta()


class Context:
    """The handle a node gets as ``ctx``: state, output, route, answers and ``run_node``."""

    __slots__ = ("_ex", "_run")

    def __init__(self, run: SessionRun, execution: Execution) -> None:
        self._run = run
        self._ex = execution

    @property
    def node(self) -> BaseNode:
        return self._ex.node

    @property
    def node_path(self) -> str:
        """The full path of this execution, e.g. ``wf@1/orch@1/child@2``."""
        return self._ex.path

    @property
    def run_id(self) -> str:
        return self._ex.path.rsplit("@", 1)[1]

    @property
    def session_id(self) -> str:
        return self._run.session_id

    @property
    def event_author(self) -> str:
        """The name of the nearest enclosing workflow, which authors this node's events."""
        return self._ex.author

    @property
    def state(self) -> State:
        return self._ex.state

    @property
    def attempt_count(self) -> int:
        """Which attempt this is, counting from 1 (see ``RetryConfig``)."""
        return self._ex.attempt

    @property
    def recorded_paths(self) -> Mapping[str, Any]:
        """The node paths the session's log has records of (read-only; keys only are meaningful)."""
        return MappingProxyType(self._run.index.records)

    @property
    def watched(self) -> bool:
        """Whether notes published here reach anyone (the store passes them on to live pages)."""
        return self._run.writer.publisher is not None

    async def publish(self, note: dict[str, Any]) -> None:
        """Tell whoever watches the run something that is not recorded (a model's text as it arrives).

        A note is ephemeral: never written to the log, never replayed, lost when nobody listens.
        The store carries it (its optional ``publish(session_id, node_path, note)``); with a store
        that has none, this does nothing.
        """
        publisher = self._run.writer.publisher
        if publisher is not None:
            await publisher(self._run.session_id, self._ex.path, note)

    @property
    def resume_inputs(self) -> Mapping[str, Any]:
        """Answers to this node's interrupts, by interrupt id; empty before any answer."""
        return MappingProxyType(self._ex.resume_inputs)

    @property
    def interrupt_ids(self) -> frozenset[str]:
        return frozenset(self._ex.interrupts)

    @property
    def output(self) -> Any:
        return self._ex.output

    @output.setter
    def output(self, value: Any) -> None:
        self._ex.set_output(value)

    @property
    def route(self) -> Any:
        return self._ex.route

    @route.setter
    def route(self, value: Any) -> None:
        self._ex.route = value
        self._ex.route_pending = True

    def run_node(
        self,
        node_like: Any,
        node_input: Any = None,
        *,
        run_id: str | None = None,
        use_as_output: bool = False,
    ) -> Coroutine[Any, Any, Any]:
        """Run a child node and return an awaitable of its output.

        The child's run id is allocated now, at the call, so children started together
        (``asyncio.gather``) are numbered in call order. The calling node must have
        ``rerun_on_resume=True``.
        """
        return self._run.run_child(self._ex, node_like, node_input, run_id, use_as_output)

    async def step(self, name: str, work: Callable[[], Awaitable[Any]], *, run_id: str | None = None) -> Any:
        """Run ``work`` once as a step recorded by one ``completed`` event at ``<this path>/<name>@<run id>``.

        For work that asks nothing and runs no children (an agent's model or tool call), lighter
        than ``run_node``: no node, no ``started`` event (a crash mid-work leaves nothing, so the
        work runs again). ``work()`` returns JSON data, which the event keeps as the output; on
        replay that comes back and ``work`` is not called. A failure is recorded at the step's
        path, then raised.
        """
        run, ex = self._run, self._ex
        path = f"{ex.path}/{name}@{ex.next_run_id(name) if run_id is None else run_id}"
        record = run.index.records.get(path)
        if record is not None and record.done:
            return fresh(record.output)
        writer = run.writer
        try:
            output = await work()
            check_value(output, f"The output of step {path}")
        except Exception as error:
            writer.raise_if_broken()
            run.failures[id(error)] = (error, path)
            info = ErrorInfo(
                type=type(error).__name__, message=safe_text(str(error)), traceback=formatted(error)
            )
            await writer.write(draft("error", path, ex.author, error=info))
            raise
        if not writer.write_now(draft("completed", path, ex.author, output=output, output_for=[path])):
            await writer.flush()
        return output

    # Orchestration hooks, used by ``Workflow`` to run its graph nodes.

    def child_hooks(
        self,
    ) -> tuple[
        Callable[[BaseNode, str], Any], Callable[[BaseNode, Any, str, bool], Coroutine[Any, Any, Any]]
    ]:
        """``(replay, execute)`` for children at paths this node chooses (a graph's nodes).

        ``replay(node, path)`` is the recorded ``Outcome`` of ``node`` at ``path`` if it need
        not run again, else None. ``execute(node, node_input, path, delegate)`` is an
        awaitable of its ``Outcome`` (replaying it if recorded); with ``delegate`` the child's
        output also counts as this node's output (a workflow's terminal node).
        """
        return self._run.replay, self._run.static_executor(self._ex)

    def deliver_output(self, value: Any, seq: int = 0) -> None:
        """Make an already persisted child output (in the event at ``seq``) this node's output."""
        self._ex.deliver(value, seq)
