"""``replay_check``: would this log replay on this code? Executing nothing.

The check folds the log as a resume would, then walks the workflow as the scheduler
would, deciding each node by its record (``replay.decide``) without running it: a node
that fast-forwards must still accept its recorded output (its output type) and its
recorded route must still lead somewhere; every recorded path must be one the walk
reaches; dynamic children are matched against the ``run_node`` calls in the parent's
source (``dynamic_calls``). The first event (by seq) that no longer fits is reported.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .dynamic_calls import CallSite, child_calls
from .events import Event
from .graph import Graph
from .nodes import START, BaseNode, JoinNode, ParallelWorker
from .replay import Action, NodeRecord, ReplayIndex, ancestors, answers_as_output, decide
from .workflow import Workflow


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """The result of ``replay_check``: ``replays``, or where and why the log no longer fits."""

    replays: bool
    node_path: str | None = None
    seq: int | None = None
    reason: str = ""
    unchecked: tuple[str, ...] = ()  # paths whose dynamic children could not be matched

    def __str__(self) -> str:
        if self.replays:
            return "replays"
        at = f" (event {self.seq})" if self.seq else ""
        return f"diverges at {self.node_path}{at}: {self.reason}"


def replay_check(
    workflow: Workflow, events: Iterable[Event | Mapping[str, Any]] | Mapping[str, Any]
) -> ReplayReport:
    """Replay a recorded log against ``workflow`` without running a node or writing an event.

    ``events`` is a session's log: ``Event`` objects, their JSON dicts, or a whole recorded
    session (a mapping with an ``events`` list, as ``manage.py wf export`` writes it).
    """
    if isinstance(events, Mapping):
        events = events["events"]
    return check_folded(workflow, [e if isinstance(e, Event) else Event.model_validate(e) for e in events])


def check_folded(workflow: Workflow, log: list[Event], index: ReplayIndex | None = None) -> ReplayReport:
    """``replay_check`` for stored ``Event`` objects; ``index``: the log already folded (a resume's)."""
    return _Check(workflow, log, index).run()


@dataclass(order=True, slots=True)
class _Divergence:
    seq: int
    path: str = field(compare=False)
    reason: str = field(compare=False)


class _Check:
    def __init__(self, workflow: Workflow, log: list[Event], index: ReplayIndex | None) -> None:
        self.workflow = workflow
        self.root = f"{workflow.name}@1"
        self.first: dict[str, int] = {}  # node path -> seq of its first event
        if index is None:
            index = ReplayIndex(self.root)
            for event in log:
                index.apply(event)
        self.index = index
        first = self.first
        for event in log:
            if event.node_path not in first:
                first[event.node_path] = event.seq
        self.below: dict[str, list[str]] = {}  # path -> recorded paths directly below it, in log order
        self.tops: list[str] = []  # paths without a parent: the root, unless the log is another's
        known: set[str] = set()
        for path in first:
            # Register the path under its parent, and the parent under its own when it has no
            # event of its own yet (climbing stops at the first path already known).
            while path and path not in known:
                known.add(path)
                parent, _, _ = path.rpartition("/")
                if parent:
                    self.below.setdefault(parent, []).append(path)
                else:
                    self.tops.append(path)
                path = parent
        self.found: list[_Divergence] = []
        self.covered: set[str] = set()  # paths whose whole subtree the walk accounts for
        self.reached: set[str] = set()
        self.unchecked: list[str] = []

    def run(self) -> ReplayReport:
        strangers = [path for path in self.tops if path != self.root]
        for path in strangers:
            self._diverge(path, f"the log is not of workflow '{self.workflow.name}' (its root is {path})")
        if not strangers and self.first:
            self._workflow(self.workflow, self.root)
            for path, seq in self.first.items():
                if path and not self._accounted(path):
                    self.found.append(_Divergence(seq, path, "no node of the workflow reaches this path now"))
        if not self.found:
            return ReplayReport(True, unchecked=tuple(self.unchecked))
        first = min(self.found)
        return ReplayReport(False, first.path, first.seq, first.reason, tuple(self.unchecked))

    # -- bookkeeping -------------------------------------------------------------------

    def _diverge(self, path: str, reason: str, seq: int | None = None) -> None:
        self.found.append(_Divergence(seq if seq is not None else self.first.get(path, 0), path, reason))

    def _accounted(self, path: str) -> bool:
        if path in self.reached:
            return True
        covered = self.covered
        return any(prefix in covered for prefix in ancestors(path)[:-1])

    def _children(self, path: str) -> list[str]:
        """Recorded paths directly below ``path``, in the order they first appear."""
        return self.below.get(path, [])

    # -- one node ------------------------------------------------------------------------

    def _node(self, node: BaseNode, path: str) -> tuple[Action, NodeRecord | None]:
        """Check the node at ``path`` as its replay would meet it; return what it does."""
        self.reached.add(path)
        record = self.index.records.get(path)
        action = decide(record, rerun_on_resume=node.rerun_on_resume, is_workflow=node.is_workflow)
        if record is None:
            return action, None
        if isinstance(node, Workflow):
            self._workflow(node, path)
        elif action is Action.FORWARD:
            self.covered.add(path)  # it does not run again: what it started stays as recorded
            if record.has_output or node.rerun_on_resume or not record.resolved:
                self._output_fits(node, record, path)
            else:  # it completed with its answers as output (see replay.forwarded_output)
                self._answers_fit(node, record, path)
        else:
            if action is Action.ANSWER:
                self._answers_fit(node, record, path)
            self._dynamic(node, path)
        return action, record

    def _output_fits(self, node: BaseNode, record: NodeRecord, path: str) -> None:
        if not record.has_output or record.output is None or isinstance(node, JoinNode):
            return
        try:
            node.restore_output(record.output)
        except Exception as error:
            wanted = _type_label(node.output_type)
            self._diverge(
                path,
                f"the recorded output of '{node.name}' no longer fits its output type {wanted}: {_first_line(error)}",
                record.seq or None,
            )

    def _answers_fit(self, node: BaseNode, record: NodeRecord, path: str) -> None:
        try:
            node.check_output(answers_as_output(record))
        except Exception as error:
            self._diverge(
                path, f"the recorded answer no longer fits the output of '{node.name}': {_first_line(error)}"
            )

    # -- a graph -------------------------------------------------------------------------

    def _workflow(self, workflow: Workflow, path: str) -> None:
        self.reached.add(path)
        graph = workflow.graph
        ready: deque[BaseNode] = deque(graph.start_targets)
        settled: list[tuple[int, int, BaseNode, NodeRecord, str]] = []
        activations: dict[str, int] = {}
        order = itertools.count()
        joins: dict[str, set[str]] = {}
        while ready or settled:
            if not ready:
                _, _, done_node, done, done_path = heapq.heappop(settled)
                self._follow(graph, done_node, done, done_path, ready, joins)
                continue
            node = ready.popleft()
            number = activations[node.name] = activations.get(node.name, 0) + 1
            node_path = f"{path}/{node.name}@{number}"
            action, record = self._node(node, node_path)
            if record is not None and (action is Action.FORWARD or (node.is_workflow and record.done)):
                if isinstance(node, JoinNode):
                    self._join_fits(graph, node, record, node_path)
                heapq.heappush(settled, (record.seq, next(order), node, record, node_path))
        for child in self._children(path):
            if not self._accounted(child):
                self._diverge(child, self._why_unreached(workflow, path, child))

    def _follow(
        self,
        graph: Graph,
        node: BaseNode,
        record: NodeRecord,
        path: str,
        ready: deque[BaseNode],
        joins: dict[str, set[str]],
    ) -> None:
        outgoing = graph.outgoing.get(node.name)
        if outgoing is None:
            return
        targets = outgoing.targets(record.route)
        if record.route is not None and (outgoing.routed or outgoing.default) and targets == outgoing.always:
            routes = sorted({repr(r) for keys, _ in outgoing.routed for _, r in keys})
            self._diverge(
                path,
                f"its recorded route {record.route!r} matches no edge of '{node.name}' now "
                f"(its routes: {', '.join(routes) or 'none'})",
                record.seq or None,
            )
        for target in targets:
            if not isinstance(target, JoinNode):
                ready.append(target)
                continue
            arrived = joins.setdefault(target.name, set())
            arrived.add(node.name)
            if arrived >= set(graph.predecessors[target.name]):
                ready.append(target)
                del joins[target.name]

    def _join_fits(self, graph: Graph, node: JoinNode, record: NodeRecord, path: str) -> None:
        recorded = record.output if isinstance(record.output, dict) else {}
        expected = graph.predecessors[node.name]
        if sorted(recorded) != sorted(expected):
            self._diverge(
                path,
                f"join '{node.name}' now waits for {', '.join(expected)}; the log joined "
                f"{', '.join(recorded) or 'nothing'}",
                record.seq or None,
            )
            return
        for name, value in recorded.items():
            try:
                graph.nodes[name].restore_output(value)
            except Exception as error:
                self._diverge(
                    path, f"the output of '{name}' joined here no longer fits: {_first_line(error)}"
                )

    def _why_unreached(self, workflow: Workflow, parent: str, child: str) -> str:
        graph = workflow.graph
        name = _name(child)
        if name not in graph.nodes:
            missing = [n for n in graph.nodes if not any(_name(c) == n for c in self._children(parent))]
            now = f"; nodes not in the log: {', '.join(missing)}" if missing else ""
            return f"workflow '{workflow.name}' has no node '{name}' now (renamed or removed?){now}"
        for source in graph.predecessors.get(name, []):
            if source == START.name:
                continue
            runs = [c for c in self._children(parent) if _name(c) == source]
            if not runs:
                return f"'{name}' now comes after '{source}', which the log does not have (a node added before it?)"
            record = self.index.records.get(runs[-1])
            if record is None or not record.done:
                return f"'{name}' now comes after '{source}', which had not finished when '{name}' ran (reordered?)"
            links = [link for link in graph.links if link.source.name == source and link.target.name == name]
            if links and links[0].routes:
                return (
                    f"the recorded route {record.route!r} of '{source}' does not lead to '{name}' now "
                    f"(that edge takes {', '.join(map(repr, links[0].routes))})"
                )
        if START.name in graph.predecessors.get(name, []):
            return f"'{name}' ran more often than the graph starts it now"
        return f"'{name}' is no longer reached the way the log recorded it"

    # -- dynamic children -------------------------------------------------------------------

    def _dynamic(self, node: BaseNode, path: str) -> None:
        children = self._children(path)
        if not children:
            return
        if isinstance(node, ParallelWorker):
            for child in children:
                if _name(child) != node.worker.name:
                    self._diverge(
                        child,
                        f"parallel worker '{node.name}' now runs '{node.worker.name}', not '{_name(child)}'",
                    )
                else:
                    self._node(node.worker, child)
            return
        if not node.rerun_on_resume:
            self._diverge(children[0], f"'{node.name}' started children but has rerun_on_resume=False now")
            return
        sites = child_calls(node)
        if sites is None:
            self.unchecked.append(path)
            self.covered.add(path)
            return
        self._match_calls(node, path, children, sites)

    def _match_calls(self, node: BaseNode, path: str, children: list[str], sites: list[CallSite]) -> None:
        known = {site.name: site.node for site in sites if site.name is not None}
        if any(site.name is None for site in sites):
            self.unchecked.append(path)
            self.covered.add(path)
        recorded_order: list[str] = []
        for child in children:
            name = _name(child)
            child_node = known.get(name)
            if child_node is None:
                if path not in self.covered:
                    calls = ", ".join(dict.fromkeys(known)) or "none"
                    self._diverge(
                        child, f"'{node.name}' no longer starts a child '{name}' (it calls: {calls})"
                    )
                continue
            if name not in recorded_order:
                recorded_order.append(name)
            self._node(child_node, child)
        code_order = list(dict.fromkeys(site.name for site in sites if site.name is not None))
        # Only straight-line calls have a fixed order; a loop or a helper may start them otherwise.
        fixed = dict.fromkeys(s.name for s in sites if s.name is not None and not s.conditional)
        both = [name for name in fixed if name in recorded_order]
        if both != [name for name in recorded_order if name in both]:
            moved = next(n for n, m in zip(recorded_order, both, strict=False) if n != m)
            at = next(c for c in children if _name(c) == moved)
            self._diverge(
                at,
                f"'{node.name}' now starts its children in the order {', '.join(both)}; the log has {', '.join(recorded_order)}",
            )
            return
        if not recorded_order:
            return
        last = code_order.index(recorded_order[-1])
        for site in sites:
            position = code_order.index(site.name) if site.name is not None else len(code_order)
            if (
                site.name is not None
                and site.name not in recorded_order
                and not site.conditional
                and position < last
            ):
                after = next(n for n in recorded_order if code_order.index(n) > position)
                at = next(c for c in children if _name(c) == after)
                self._diverge(
                    at,
                    f"'{node.name}' now starts '{site.name}' (line {site.line}) before '{after}', "
                    f"and the log has no '{site.name}' (a dynamic child added before a recorded one?)",
                )
                return


def _name(path: str) -> str:
    """``wf@1/orch@1/child@2`` -> ``child``."""
    return path[path.rfind("/") + 1 : path.rfind("@")]


def _type_label(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def _first_line(error: BaseException) -> str:
    lines = str(error).splitlines()
    return " ".join(line.strip() for line in lines[:3]) if lines else type(error).__name__
