"""Workflows only the dashboard tests register: one that fails, with HTML in its error."""

from __future__ import annotations

from typing import Any

from engine import START, Workflow, node


def fragile(node_input: Any) -> Any:
    raise RuntimeError("<img src=x onerror=alert(1)> the ledger is locked")


broken = Workflow(name="web_broken", edges=[(START, node(fragile, name="post_to_ledger"))])
