"""``Workflow``: a node that runs a graph of nodes."""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from collections.abc import AsyncGenerator, Coroutine
from typing import Any, ClassVar

from pydantic import Field, PrivateAttr

from .context import Context
from .errors import ConfigurationError, NodeInterruptedError, WorkflowError
from .fingerprint import graph_fingerprint
from .graph import Graph, compile_graph, expand, is_join
from .nodes import START, BaseNode, FunctionNode, JoinNode, ParallelWorker
from .validation import validate
from .values import json_schema


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
    or a JSON Schema dict; without it the first node's input type is used. ``version``
    names this revision of the workflow (every run records the version it started on);
    without it, it is a fingerprint of the graph (see ``engine.fingerprint``).
    """

    edges: list[Any] = Field(default_factory=list)
    max_concurrency: int | None = None
    version: str = ""
    rerun_on_resume: bool = True

    _graph: Graph = PrivateAttr()
    _input_schema: dict[str, Any] | None = PrivateAttr(default=None)
    _input_model: Any = PrivateAttr(default=None)

    is_workflow: ClassVar[bool] = True

    def __init__(self, *, input_schema: Any = None, version: str | int | None = None, **data: Any) -> None:
        if version is not None:
            data["version"] = _checked_version(version)
        super().__init__(**data)
        links = expand(self.edges)
        validate(links)
        self._graph = compile_graph(links)
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
        if input_schema is not None:
            self._input_schema = json_schema(input_schema)
            if not isinstance(input_schema, dict):
                self._input_model = input_schema  # for graph rule 8; the input is not coerced
        else:
            first = self._graph.start_targets
            if len(first) == 1 and first[0].input_type is not None:
                self._input_schema = json_schema(first[0].input_type)

    @property
    def declared_input_type(self) -> Any:
        return self._input_model if self.input_type is None else self.input_type

    @property
    def input_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the workflow's input, or None when nothing declares it."""
        return self._input_schema

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
            "input_schema": self._input_schema,
            "nodes": nodes,
            "edges": edges,
        }

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        outputs = await _Scheduler(self, ctx).run(node_input)
        if len(outputs) > 1:
            names = ", ".join(name for name, _, _ in outputs)
            raise WorkflowError(
                f"Workflow {self.name}: multiple terminal nodes produced output ({len(outputs)}: {names}). "
                "A workflow must have at most one terminal output; join the branches with a JoinNode."
            )
        if outputs:
            ctx.deliver_output(outputs[0][1], outputs[0][2])
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
        self.graph = workflow.graph
        self.ctx = ctx
        limit = workflow.max_concurrency
        self.limit = limit if limit and limit > 0 else None
        self.ready: deque[tuple[BaseNode, Any]] = deque()
        self.running: dict[asyncio.Task[Any], BaseNode] = {}
        self.activations: dict[str, int] = {}
        self.joins: dict[str, dict[str, Any]] = {}
        self.terminal_outputs: list[tuple[str, Any, int]] = []  # name, output, its event's seq
        self.interrupts: list[str] = []
        self.failure: BaseException | None = None
        self.finished: deque[asyncio.Task[Any]] = deque()
        self.replayed: list[tuple[int, int, BaseNode, Any]] = []  # heap by recorded seq
        self.wakeup: asyncio.Future[None] | None = None
        self.loop = asyncio.get_running_loop()
        self.replay, self.execute_child = ctx.child_hooks()

    async def run(self, node_input: Any) -> list[tuple[str, Any, int]]:
        self._trigger(START, node_input, None)
        try:
            while True:
                alone = self._start_ready()
                if alone is not None:
                    # Nothing else can run meanwhile: await it here instead of in a task.
                    node, value, path = alone
                    self._settle(node, await self._execute(node, value, path))
                    continue
                if not self.running:
                    break
                if not self.finished:
                    self.wakeup = self.loop.create_future()
                    await self.wakeup
                while self.finished:
                    task = self.finished.popleft()
                    self._settle(self.running.pop(task), task.result())
        except BaseException:
            for task in self.running:
                task.cancel()
            await asyncio.gather(*self.running, return_exceptions=True)
            raise
        if self.failure is not None:
            raise self.failure
        if self.interrupts:
            raise NodeInterruptedError(self.interrupts, self.ctx.node_path)
        return self.terminal_outputs

    def _execute(self, node: BaseNode, value: Any, path: str) -> Coroutine[Any, Any, Any]:
        return self.execute_child(node, value, path, node.name in self.graph.terminal)

    def _start_ready(self) -> tuple[BaseNode, Any, str] | None:
        """Start what is ready; return the one node to await directly when it is alone.

        Replayed completions are settled in the order they happened in the log, so the
        nodes they trigger get the same run ids and inputs as in the recorded turn.
        """
        replay, base = self.replay, self.ctx.node_path
        while (self.ready or self.replayed) and self.failure is None:
            if not self.ready:
                _, _, node, outcome = heapq.heappop(self.replayed)
                self._settle(node, outcome)
                continue
            if self.limit is not None and len(self.running) >= self.limit:
                return None
            node, value = self.ready.popleft()
            number = self.activations.get(node.name, 0) + 1
            self.activations[node.name] = number
            path = f"{base}/{node.name}@{number}"
            outcome = replay(node, path)
            if outcome is not None:
                if outcome.status == "completed":
                    if is_join(node) and isinstance(outcome.output, dict):
                        outcome.output = self._restore_join(outcome.output)
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
            task = asyncio.Task(self._execute(node, value, path), loop=self.loop, eager_start=True)
            self.running[task] = node
            if task.done():
                self.finished.append(task)
            else:
                task.add_done_callback(self._finished)
        return None

    def _restore_join(self, recorded: dict[str, Any]) -> dict[str, Any]:
        """A join has no type of its own: restore each entry through its predecessor's type."""
        nodes = self.graph.nodes
        return {
            name: nodes[name].restore_output(value) if name in nodes else value
            for name, value in recorded.items()
        }

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self.finished.append(task)
        wakeup = self.wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _settle(self, node: BaseNode, outcome: Any) -> None:
        if outcome.status == "completed":
            if node.name in self.graph.terminal and outcome.output is not None:
                self.terminal_outputs.append((node.name, outcome.output, outcome.output_seq))
            self._trigger(node, outcome.output, outcome.route)
        elif outcome.status == "waiting":
            self.interrupts.extend(i for i in outcome.interrupts if i not in self.interrupts)
        elif self.failure is None:
            self.failure = outcome.error

    def _trigger(self, node: BaseNode, output: Any, route: Any) -> None:
        outgoing = self.graph.outgoing.get(node.name)
        if outgoing is None:
            return
        for target in outgoing.targets(route):
            if not is_join(target):
                self.ready.append((target, output))
                continue
            arrived = self.joins.setdefault(target.name, {})
            arrived[node.name] = output
            expected = self.graph.predecessors[target.name]
            if len(arrived) == len(expected):
                self.ready.append((target, {name: arrived[name] for name in expected}))
                del self.joins[target.name]
