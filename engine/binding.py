"""How a function's parameters are filled: context, input, then state by name."""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigurationError, WorkflowError
from .events import Event, RequestInput

_CTX, _INPUT, _STATE = 0, 1, 2
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class Signature:
    """What a node function takes and returns, read once at node construction."""

    params: tuple[tuple[str, int, Any], ...]
    input_name: str | None
    input_type: Any
    output_type: Any
    input_only: str | None = None  # the input's name when it is the one parameter: no binding


def _caller_namespace() -> dict[str, Any]:
    """Local names of the frames building the node (nearest first), outside engine and pydantic.

    Annotations are strings under ``from __future__ import annotations``; a class defined in
    the function that builds the node is only found there.
    """
    names: dict[str, Any] = {}
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").split(".")[0] not in _INTERNAL:
            for key, value in frame.f_locals.items():
                names.setdefault(key, value)
        frame = frame.f_back  # type: ignore[assignment]
    return names


_INTERNAL = frozenset({"engine", "pydantic", "functools", "typing"})


def _returns_events(annotation: Any) -> bool:
    """``-> Event`` or ``-> RequestInput`` (alone or in a union) declares no output type."""
    candidates = (
        typing.get_args(annotation)
        if isinstance(annotation, types.UnionType) or (typing.get_origin(annotation) is typing.Union)
        else (annotation,)
    )
    return any(isinstance(c, type) and issubclass(c, Event | RequestInput) for c in candidates)


def _closure(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's closure variables that are bound already (a self-reference is not yet)."""
    names: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, getattr(func, "__closure__", None) or (), strict=False):
        try:
            names[name] = cell.cell_contents
        except ValueError:  # empty cell: bound after the decorator runs
            continue
    return names


def _hints(func: Callable[..., Any], node_name: str) -> dict[str, Any]:
    if not any(isinstance(hint, str) for hint in getattr(func, "__annotations__", {}).values()):
        return typing.get_type_hints(func)
    local_names = _caller_namespace()
    local_names.update(_closure(func))
    try:
        return typing.get_type_hints(func, localns=local_names)
    except NameError as error:
        raise ConfigurationError(
            f"Node '{node_name}': cannot resolve the type hint {error.name!r} of {func.__qualname__}; "
            "define the class at module level or where the node is built"
        ) from error


def read_signature(func: Callable[..., Any], node_name: str, context_type: type) -> Signature:
    """Work out which parameter gets the context, which the input, which come from state."""
    hints = _hints(func, node_name)
    params = [
        p
        for p in inspect.signature(func).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    roles: dict[str, int] = {}
    for p in params:
        if p.name == "ctx" or hints.get(p.name) is context_type:
            roles[p.name] = _CTX
        elif p.name == "node_input":
            roles[p.name] = _INPUT
    if _INPUT not in roles.values():
        for p in params:
            if p.name not in roles and p.default is _NO_DEFAULT:
                roles[p.name] = _INPUT
                break
    input_name = next((name for name, role in roles.items() if role == _INPUT), None)
    input_type = hints.get(input_name) if input_name else None
    plan = tuple((p.name, roles.get(p.name, _STATE), p.default) for p in params)
    output_type = (
        None if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func) else hints.get("return")
    )
    if output_type is type(None) or _returns_events(output_type):
        output_type = None
    input_only = input_name if len(plan) == 1 and plan[0][1] == _INPUT else None
    return Signature(plan, input_name, input_type, output_type, input_only)


def bind(signature: Signature, node_name: str, ctx: Any, node_input: Any) -> dict[str, Any]:
    """Build the keyword arguments for one call."""
    kwargs: dict[str, Any] = {}
    for name, role, default in signature.params:
        if role == _CTX:
            kwargs[name] = ctx
        elif role == _INPUT:
            kwargs[name] = node_input
        else:
            state = ctx.state
            if name in state:
                kwargs[name] = state[name]
            elif default is not _NO_DEFAULT:
                kwargs[name] = default
            else:
                raise WorkflowError(
                    f"Node '{node_name}': parameter '{name}' is not in ctx.state and has no default"
                )
    return kwargs
