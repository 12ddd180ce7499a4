"""A workflow's default version: a stable fingerprint of its graph.

The fingerprint covers what a recorded log depends on: node names and kinds, their
options (``rerun_on_resume``, retries, timeout, parallel workers), their declared input and
output types (by qualified name), the edges with their routes, ``max_concurrency``, and
nested workflows' own fingerprints. It never covers node bodies, so editing what a node
does keeps the version. It is built from names and values only (no ``id()``, no
``hash()``), so it is the same in every process and every Python run.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .nodes import BaseNode, ParallelWorker

if TYPE_CHECKING:
    from .graph import Graph

FINGERPRINT_LENGTH = 12
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # reprs of functions and objects name their address


def _stable_repr(value: Any) -> str:
    return _ADDRESS.sub("", repr(value))


def type_name(annotation: Any) -> str | None:
    """A stable name for a declared type: ``module.QualName``, or the typing repr."""
    if annotation is None:
        return None
    if isinstance(annotation, type):
        return f"{annotation.__module__}.{annotation.__qualname__}"
    return _stable_repr(annotation)


def _plain(value: Any) -> Any:
    """Options as JSON: classes by name, models by their fields."""
    if isinstance(value, type):
        return type_name(value)
    if isinstance(value, BaseModel):
        return {key: _plain(item) for key, item in value.model_dump().items()}
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def describe_node(node: BaseNode) -> dict[str, Any]:
    """What of one node a recorded log depends on."""
    if node.is_workflow:
        return {"name": node.name, "kind": "workflow", "version": getattr(node, "version", None)}
    data: dict[str, Any] = {
        "name": node.name,
        "kind": type(node).__name__,
        "rerun_on_resume": node.rerun_on_resume,
        "timeout": node.timeout,
        "retry": _plain(node.retry_config),
        "input": type_name(node.input_type),
        "output": type_name(node.output_type),
    }
    if node.wait_for_output:  # only when set, so graphs without it keep their fingerprints
        data["wait_for_output"] = True
    binding = getattr(node, "parameter_binding", "state")
    if binding != "state":
        data["parameter_binding"] = binding
    if isinstance(node, ParallelWorker):
        data["worker"] = describe_node(node.worker)
        data["max_parallel_workers"] = node.max_parallel_workers
    return data


def graph_fingerprint(name: str, graph: Graph, max_concurrency: int | None) -> str:
    """The hex digest that names a workflow's graph (its default version)."""
    edges = sorted(
        [link.source.name, link.target.name, sorted([type(r).__name__, r] for r in link.routes)]
        for link in graph.links
    )
    data = {
        "name": name,
        "max_concurrency": max_concurrency,
        "nodes": [describe_node(graph.nodes[key]) for key in sorted(graph.nodes)],
        "edges": edges,
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=_stable_repr)
    return hashlib.sha256(text.encode()).hexdigest()[:FINGERPRINT_LENGTH]
