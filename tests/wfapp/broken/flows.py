"""Workflows that are broken on purpose, for the system-check tests."""

from __future__ import annotations

from engine import START, Workflow


def step(node_input: object) -> object:
    return node_input


not_a_workflow = "just a string"
fine = Workflow(name="fine_flow", edges=[(START, step)])
same_name = Workflow(name="fine_flow", edges=[(START, step)])
