"""How a function's parameters are filled: context, input, then state by name."""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import ConfigurationError, WorkflowDataError
from .events import Event, RequestInput
from .values import validator

_CTX, _INPUT, _STATE, _FIELD = range(4)
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class Signature:
    """What a node function takes and returns, read once at node construction.

    ``params`` holds ``(name, role, default, check)`` per parameter; ``check`` validates a
    value read from state or from the input's fields into the annotation (None: undeclared).
    """

    params: tuple[tuple[str, int, Any, Callable[[Any], Any] | None], ...]
    input_name: str | None
    input_type: Any
    output_type: Any
    input_only: str | None = None  # the input's name when it is the one parameter: no binding

    @property
    def state_names(self) -> list[str]:
        """The parameters that are read from state (a state schema must declare them)."""
        return [name for name, role, _, _ in self.params if role == _STATE]


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


def read_signature(
    func: Callable[..., Any], node_name: str, context_type: type, from_fields: bool = False
) -> Signature:
    """Work out which parameter gets the context, which the input, which come from state.

    As in ADK, ``ctx`` (by name, or annotated with the context type) gets the context,
    ``node_input`` the input, and every other parameter is read from session state. The
    seeds' style is kept too: a function without a ``node_input`` parameter whose only
    parameter without a default (``ctx`` aside) has another name takes the input in it
    (``def lookup(city: str)``). With ``from_fields`` (``parameter_binding="node_input"``)
    parameters are the input's fields instead.
    """
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
        elif from_fields:
            roles[p.name] = _FIELD
        elif p.name == "node_input":
            roles[p.name] = _INPUT
    if not from_fields and _INPUT not in roles.values():
        required = [p.name for p in params if p.name not in roles and p.default is _NO_DEFAULT]
        if len(required) == 1:
            roles[required[0]] = _INPUT
    input_name = next((name for name, role in roles.items() if role == _INPUT), None)
    input_type = hints.get(input_name) if input_name else None
    plan = tuple(
        (
            p.name,
            role,
            p.default,
            validator(hints.get(p.name)) if role in (_STATE, _FIELD) else None,
        )
        for p in params
        for role in (roles.get(p.name, _STATE),)
    )
    output_type = (
        None if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func) else hints.get("return")
    )
    if output_type is type(None) or _returns_events(output_type):
        output_type = None
    input_only = input_name if len(plan) == 1 and plan[0][1] == _INPUT else None
    return Signature(plan, input_name, input_type, output_type, input_only)


def _checked(check: Callable[[Any], Any] | None, node_name: str, name: str, value: Any, source: str) -> Any:
    if check is None:
        return value
    try:
        return check(value)
    except ValidationError as error:
        raise WorkflowDataError(
            f"Node '{node_name}': parameter '{name}' read from {source} does not match its annotation: "
            f"{error.errors()[0]['msg']}"
        ) from None


def bind(signature: Signature, node_name: str, ctx: Any, node_input: Any) -> dict[str, Any]:
    """Build the keyword arguments for one call."""
    kwargs: dict[str, Any] = {}
    for name, role, default, check in signature.params:
        if role == _CTX:
            kwargs[name] = ctx
        elif role == _INPUT:
            kwargs[name] = node_input
        elif role == _FIELD:
            kwargs[name] = _field(node_input, name, default, check, node_name)
        else:
            state = ctx.state
            if name in state:
                kwargs[name] = _checked(check, node_name, name, state[name], "state")
            elif default is not _NO_DEFAULT:
                kwargs[name] = default
            else:
                raise WorkflowDataError(
                    f"Node '{node_name}': parameter '{name}' is not in ctx.state and has no default"
                )
    return kwargs


def _field(
    node_input: Any, name: str, default: Any, check: Callable[[Any], Any] | None, node_name: str
) -> Any:
    if isinstance(node_input, BaseModel):
        if name in type(node_input).model_fields:
            return _checked(check, node_name, name, getattr(node_input, name), "the input")
    elif isinstance(node_input, dict) and name in node_input:
        return _checked(check, node_name, name, node_input[name], "the input")
    if default is not _NO_DEFAULT:
        return default
    raise WorkflowDataError(
        f"Node '{node_name}': parameter '{name}' is not a field of its input and has no default "
        "(parameter_binding='node_input')"
    )
