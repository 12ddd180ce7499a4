"""A module whose workflow fails graph validation at import time."""

from __future__ import annotations

from engine import Workflow


def orphan(node_input: object) -> object:
    return node_input


def other(node_input: object) -> object:
    return node_input


# No edge leaves START: the graph has no entry point.
bad_graph = Workflow(name="bad_graph", edges=[(orphan, other)])
