"""``Workflow``: a node that runs a graph of nodes."""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

from pydantic import Field, PrivateAttr

from .context import Context
from .errors import ConfigurationError, NodeInterruptedError, TerminalOutputsError
from .fingerprint import graph_fingerprint
from .graph import Graph, compile_graph, expand
from .nodes import PLAIN_TYPES, START, BaseNode, FunctionNode, JoinNode, ParallelWorker
from .outcome import Outcome
from .state_schema import check_state_parameters
from .validation import validate
from .values import dumped, json_schema


def _kind(node: BaseNode) -> str:
    if isinstance(node, Workflow):
        return "workflow"
    if isinstance(node, JoinNode):
        return "join"
    if isinstance(node, ParallelWorker):
        return "parallel_worker"
    if isinstance(node, FunctionNode):
        return "function"
    return "node"


class Workflow(BaseNode):
    """A graph of nodes, built from chain tuples and ``Edge`` objects and validated at once.

    A workflow is itself a node, so it can be nested in another workflow's edges or run
    with ``ctx.run_node``. ``max_concurrency`` caps how many graph nodes run at once
    (dynamic children are not counted). ``input_schema`` may be a pydantic model, a type
    or a JSON Schema dict (validating the workflow's input, as in ADK); ``input_json_schema``
    is its JSON Schema, or without it the first node's input type's. ``output_schema``
    validates and coerces the workflow's output (the terminal node's). ``version``
    names this revision of the workflow (every run records the version it started on);
    without it, it is a fingerprint of the graph (see ``engine.fingerprint``).
    """

    edges: list[Any] = Field(default_factory=list)
    max_concurrency: int | None = None
    version: str = ""
    rerun_on_resume: bool = True

    _graph: Graph = PrivateAttr()
    _input_json_schema: dict[str, Any] | None = PrivateAttr(default=None)

    is_workflow: ClassVar[bool] = True

    def __init__(self, *, version: str | int | None = None, **data: Any) -> None:
        if version is not None:
            data["version"] = _checked_version(version)
        super().__init__(**data)
        links = expand(self.edges)
        validate(links)
        self._graph = compile_graph(links)
        for node in self._graph.nodes.values():
            schema = node.state_schema or self.state_schema
            if schema is not None and isinstance(node, FunctionNode):
                check_state_parameters(schema, node.name, node.signature.state_names)
        if not self.version:
            self.version = graph_fingerprint(self.name, self._graph, self.max_concurrency)
        if self.output_type is None:
            # The workflow's output is its terminal node's, so it has that node's type.
            declared = {
                id(node.output_type): node.output_type
                for name, node in self._graph.nodes.items()
                if name in self._graph.terminal and node.output_type is not None
            }
            if len(declared) == 1:
                self.output_type = next(iter(declared.values()))
        if self.input_schema is not None:
            self._input_json_schema = json_schema(self.input_schema)
        else:
            first = self._graph.start_targets
            if len(first) == 1 and first[0].input_type is not None:
                self._input_json_schema = json_schema(first[0].input_type)

    @property
    def input_json_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the workflow's input, or None when nothing declares it."""
        return self._input_json_schema

    def check_input(self, value: Any) -> Any:
        """Validate the input into ``input_schema``; its nodes get it as JSON data, as in ADK."""
        return dumped(super().check_input(value))

    @property
    def graph(self) -> Graph:
        return self._graph

    def describe(self) -> dict[str, Any]:
        """The workflow's nodes, edges and routes as plain data."""
        graph = self._graph
        nodes = [{"name": START.name, "kind": "start", "terminal": False, "description": ""}]
        nodes += [
            {
                "name": node.name,
                "kind": _kind(node),
                "terminal": node.name in graph.terminal,
                "description": node.description,
                "rerun_on_resume": node.rerun_on_resume,
            }
            for node in graph.nodes.values()
        ]
        edges = [
            {"source": link.source.name, "target": link.target.name, "routes": list(link.routes)}
            for link in graph.links
        ]
        return {
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "input_schema": self._input_json_schema,
            "nodes": nodes,
            "edges": edges,
        }

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        outputs = await _Scheduler(self, ctx).run(node_input)
        if len(outputs) > 1:
            names = ", ".join(outputs)
            raise TerminalOutputsError(
                f"Workflow {self.name}: multiple terminal nodes produced output ({len(outputs)}: {names}). "
                "A workflow must have at most one terminal output; join the branches with a JoinNode."
            )
        for output, seq in outputs.values():
            if self.output_schema is not None and not isinstance(self.output_schema, dict):
                coerced = self.check_output(output)
                if (
                    coerced is not output and coerced != output
                ):  # defaults filled, say: the workflow's own output event
                    ctx.output = coerced
                    continue
            ctx.deliver_output(output, seq)
        return
        yield  # pragma: no cover


def _checked_version(version: str | int) -> str:
    if isinstance(version, bool) or not isinstance(version, str | int):
        raise ConfigurationError(f"Workflow version must be a string or an integer, not {version!r}")
    text = str(version).strip()
    if not text or len(text) > 64 or any(not (c.isalnum() or c in "._-+") for c in text):
        raise ConfigurationError(
            f'Workflow version {version!r} must be 1-64 letters, digits or \'._-+\' (for example "3" or "2025.1")'
        )
    return text


class _Scheduler:
    """One execution of a workflow's graph: triggers nodes as their predecessors finish."""

    def __init__(self, workflow: Workflow, ctx: Context) -> None:
        self.graph = graph = workflow.graph
        self.outgoing, self.terminal, self.join_names = graph.outgoing, graph.terminal, graph.joins
        self.ctx = ctx
        self.base = ctx.node_path  # its nodes' paths start with it
        limit = workflow.max_concurrency
        self.limit = limit if limit and limit > 0 else None
        self.ready: deque[tuple[BaseNode, Any]] = deque()
        self.running: dict[asyncio.Task[Any], BaseNode] = {}
        self.activations: dict[str, int] = {}
        self.joins: dict[str, dict[str, Any]] = {}
        # Nodes with an execution running (in a task) or waiting for input, and the triggers
        # that came for them meanwhile: as in ADK, a node runs one execution at a time.
        self.busy: set[str] = set()
        self.held: dict[str, deque[Any]] = {}
        # Each terminal node's latest output and its event's seq: a node that runs again (a
        # fan-in without a join, a loop) is still one terminal node.
        self.terminal_outputs: dict[str, tuple[Any, int]] = {}
        self.interrupts: list[str] = []
        self.failure: BaseException | None = None
        self.finished: deque[asyncio.Task[Any]] = deque()
        self.replayed: list[tuple[int, int, BaseNode, Any]] = []  # heap by recorded seq
        self.wakeup: asyncio.Future[None] | None = None
        self.loop = asyncio.get_running_loop()
        self.replay, self.execute_child = ctx.child_hooks()

    async def run(self, node_input: Any) -> dict[str, tuple[Any, int]]:
        self._settle(START, Outcome("completed", node_input))  # START outputs the input
        try:
            while True:
                alone = self._start_ready()
                if alone is not None:
                    # Nothing else can run meanwhile: await it here instead of in a task.
                    node, value, path = alone
                    self._settle(
                        node, await self.execute_child(node, value, path, node.name in self.terminal)
                    )
                    continue
                if not self.running:
                    break
                if not self.finished:
                    self.wakeup = self.loop.create_future()
                    await self.wakeup
                while self.finished:
                    task = self.finished.popleft()
                    node = self.running.pop(task)
                    if not task.cancelled():  # cancelled: a sibling failed (see _settle)
                        outcome = task.result()
                        if outcome.status != "waiting":
                            # Done: the next trigger that came for it while it ran is ready
                            # (in arrival order). One awaited alone met none while it ran.
                            self.busy.discard(node.name)
                            if self.held and (held := self.held.get(node.name)):
                                self.ready.append((node, held.popleft()))
                        self._settle(node, outcome)
        except BaseException:
            for task in self.running:
                task.cancel()
            await asyncio.gather(*self.running, return_exceptions=True)
            raise
        if self.failure is not None:
            raise self.failure
        if self.interrupts:
            raise NodeInterruptedError(self.interrupts, self.base)
        return self.terminal_outputs

    def _start_ready(self) -> tuple[BaseNode, Any, str] | None:
        """Start what is ready; return the one node to await directly when it is alone.

        Replayed completions are settled in the order they happened in the log, so the
        nodes they trigger get the same run ids and inputs as in the recorded turn.
        """
        replay, base = self.replay, self.base
        while (self.ready or self.replayed) and self.failure is None:
            if not self.ready:
                _, _, node, outcome = heapq.heappop(self.replayed)
                self._settle(node, outcome)
                continue
            if self.limit is not None and len(self.running) >= self.limit:
                return None
            node, value = self.ready.popleft()
            name = node.name
            if name in self.busy:
                self.held.setdefault(name, deque()).append(value)
                continue
            number = self.activations.get(name, 0) + 1
            self.activations[name] = number
            path = f"{base}/{name}@{number}"
            outcome = replay(node, path)
            if outcome is not None:
                if outcome.status == "completed":
                    heapq.heappush(self.replayed, (outcome.seq, len(self.replayed), node, outcome))
                else:
                    self._settle(node, outcome)
                continue
            if not self.ready and not self.running and not self.replayed:
                return node, value, path
            # Eager: a node that never waits (most do not) ends right here, without a task
            # step on the loop and a done callback; one that waits goes on as a task. Either
            # way it is settled after what is ready now, as a task started later would be, so
            # successors get the same run ids as in the recorded turn.
            run = self.execute_child(node, value, path, name in self.terminal)  # terminal: its output counts
            task = asyncio.Task(run, loop=self.loop, eager_start=True)
            self.running[task] = node
            self.busy.add(name)  # until it is done (see run)
            if task.done():
                self.finished.append(task)
            else:
                task.add_done_callback(self._finished)
        return None

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self.finished.append(task)
        wakeup = self.wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _settle(self, node: BaseNode, outcome: Outcome) -> None:
        """Take a node's outcome: a completed one triggers its successors (START's, the
        workflow's input, starts the graph)."""
        if outcome.status == "completed":
            output = outcome.output
            if type(output) not in PLAIN_TYPES:
                if output is not None:
                    output = node.handed(output)  # a model, as JSON data
                elif node.wait_for_output and outcome.route is None:
                    return  # it stays pending: its successors wait for an execution with output
            name = node.name
            if name in self.terminal:
                if outcome.output is None:  # its latest execution produced none, as in ADK
                    self.terminal_outputs.pop(name, None)
                else:
                    self.terminal_outputs[name] = (outcome.output, outcome.output_seq)
            outgoing = self.outgoing.get(name)
            if outgoing is None:
                return
            for target in outgoing.targets(outcome.route):
                if target.name not in self.join_names:
                    self.ready.append((target, output))
                    continue
                arrived = self.joins.setdefault(target.name, {})
                arrived[name] = output
                expected = self.graph.predecessors[target.name]
                if len(arrived) == len(expected):
                    self.ready.append((target, {source: arrived[source] for source in expected}))
                    del self.joins[target.name]
        elif outcome.status == "waiting":
            self.busy.add(node.name)  # triggers that come for it now wait for a later turn
            self.interrupts.extend(i for i in outcome.interrupts if i not in self.interrupts)
        elif self.failure is None:
            self.failure = outcome.error
            # The run fails with this error: what still runs beside it stops now (as in ADK)
            # and, having recorded no outcome, runs again when the run is retried.
            for task in self.running:
                if not task.done():
                    task.cancel()
