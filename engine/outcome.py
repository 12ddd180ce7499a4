"""How a node execution ended, and sorting what its body raised or emitted."""

from __future__ import annotations

from typing import Any

from .context import Execution
from .errors import NodeInterruptedError, WorkflowError, child_error

_NO_INTERRUPTS: list[str] = []  # a completed or failed outcome's: one shared list, only ever read


class Outcome:
    """How a node execution ended: completed (output, route), waiting or failed.

    A plain class: one is made per node execution (a dataclass's ``__init__`` with a default
    factory cost twice as much).
    """

    __slots__ = ("error", "interrupts", "output", "output_seq", "route", "seq", "status")

    def __init__(
        self,
        status: str,
        output: Any = None,
        route: Any = None,
        interrupts: list[str] | None = None,
        error: BaseException | None = None,
        seq: int = 0,  # for a replayed completion: where it happened in the log
        output_seq: int = 0,  # the event that carries the output (0: none)
    ) -> None:
        self.status = status
        self.output = output
        self.route = route
        self.interrupts: list[str] = _NO_INTERRUPTS if interrupts is None else interrupts
        self.error = error
        self.seq = seq
        self.output_seq = output_seq

    def __repr__(self) -> str:
        return (
            f"Outcome({self.status!r}, output={self.output!r}, route={self.route!r}, "
            f"interrupts={self.interrupts!r}, error={self.error!r})"
        )


def split_group(ex: Execution, group: BaseExceptionGroup[Any]) -> tuple[bool, BaseException | None]:
    """Sort a TaskGroup's exceptions: interrupts make the node wait, anything else fails it."""
    waiting, rest = group.split(NodeInterruptedError)
    for signal in leaves(waiting):
        assert isinstance(signal, NodeInterruptedError)
        ex.add_interrupts(signal.interrupt_ids)
    if rest is None:
        return True, None
    first = child_error(leaves(rest)[0])
    if not isinstance(first, Exception):
        raise rest
    return waiting is not None, first


def leaves(group: BaseExceptionGroup[Any] | None) -> list[BaseException]:
    if group is None:
        return []
    found: list[BaseException] = []
    for error in group.exceptions:
        found.extend(leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    return found


_ROUTE_TYPES = (str, int, bool)


def checked_route(path: str, route: Any) -> Any:
    if type(route) in _ROUTE_TYPES:
        return route
    routes = route if isinstance(route, list) else [route]
    if not routes or any(type(r) not in _ROUTE_TYPES for r in routes):
        raise WorkflowError(
            f"Node {path} emitted the route {route!r}; routes are strings, integers or booleans "
            "(or a list of them)"
        )
    return route
