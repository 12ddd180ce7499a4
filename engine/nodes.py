"""Nodes: the units of work a workflow runs."""

from __future__ import annotations

import asyncio
import inspect
import typing
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .binding import Signature, bind, read_signature
from .context import Context
from .errors import ConfigurationError, NodeInterruptedError, WorkflowDataError
from .retry import RetryConfig
from .state_schema import check_state_parameters
from .strict import StrictModel
from .values import dumped, fresh, is_model, validator


class BaseNode(StrictModel):
    """A node. Subclasses implement ``async def _run_impl(self, *, ctx, node_input)``.

    ``_run_impl`` is an async generator: it yields its output (or an ``Event``, or a
    ``RequestInput``), or sets ``ctx.output`` / ``ctx.route`` / ``ctx.state``.

    ADK's fields: ``input_schema`` and ``output_schema`` (a pydantic model, a type such as
    ``list[str]``, or a JSON Schema dict, which is kept but not enforced, as in ADK) validate
    the node's input and output; ``wait_for_output`` keeps a node that completes without
    output or route pending, without triggering its successors, until an execution produces
    one; ``state_schema`` (a pydantic model) checks the node's state writes (it overrides the
    enclosing workflow's). ``input_type`` and ``output_type`` are the types actually checked:
    the schemas, or for a function node its annotations.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    rerun_on_resume: bool = False
    wait_for_output: bool = False
    retry_config: RetryConfig | None = None
    timeout: float | None = None
    input_schema: Any = None
    output_schema: Any = None
    state_schema: type[BaseModel] | None = None
    input_type: Any = None
    output_type: Any = None

    is_workflow: ClassVar[bool] = False

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError(f"Node name '{name}' must be a valid Python identifier.")
        return name

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _schema(cls, schema: Any) -> Any:
        if schema is None or isinstance(schema, dict | type) or typing.get_origin(schema) is not None:
            return schema
        raise ValueError(
            f"a schema is a pydantic model, a type such as list[str] or a JSON Schema dict, not {schema!r}"
        )

    def model_post_init(self, context: Any, /) -> None:
        # A JSON Schema dict is ADK's "accepted, never enforced" schema: it checks nothing.
        if self.input_type is None and not isinstance(self.input_schema, dict):
            self.input_type = self.input_schema
        if self.output_type is None and not isinstance(self.output_schema, dict):
            self.output_type = self.output_schema

    @cached_property
    def output_validator(self) -> Callable[[Any], Any] | None:
        """Validates a value into ``output_type``; None when no type is declared."""
        return _validator_for(self.name, self.output_type, "output")

    @cached_property
    def input_validator(self) -> Callable[[Any], Any] | None:
        """Validates a value into ``input_type``; None when no type is declared."""
        return _validator_for(self.name, self.input_type, "input")

    def check_input(self, value: Any) -> Any:
        """Validate the node's input into ``input_type``; fail naming the node and fields."""
        check = self.input_validator
        if check is None:
            return value
        try:
            return check(value)
        except ValidationError as error:
            raise _mismatch(self.name, "input", self.input_type, error) from error

    def check_output(self, value: Any) -> Any:
        """Validate an output into ``output_type``; fail naming the node and fields."""
        check = self.output_validator
        if check is None:
            return value
        try:
            return check(value)
        except ValidationError as error:
            raise _mismatch(self.name, "output", self.output_type, error) from error

    def handed(self, output: Any) -> Any:
        """The output as a graph successor gets it: a pydantic model as JSON data, as ADK
        hands it (its None fields left out when this node's schema validated it)."""
        if not isinstance(output, BaseModel):
            return output
        return output.model_dump(mode="json", exclude_none=self.output_schema is not None)

    @cached_property
    def plain_call(self) -> Callable[[Context, Any], Any] | None:
        """``(ctx, node_input) -> output``, for a node whose work is one plain call.

        The executor calls it in place of ``_run_impl`` and takes the return value as
        ``_run_impl``'s returned one, sparing the generator or coroutine around it.
        """
        return None

    def restore_output(self, data: Any) -> Any:
        """Turn an output read back from the log into the declared output type."""
        restore = self.output_validator
        data = fresh(data)  # the caller's own copy: changing it must not change the log
        return data if restore is None or data is None else restore(data)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError(f"{type(self).__name__} must implement _run_impl")
        yield  # pragma: no cover

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


PLAIN_TYPES = frozenset({str, int, float, bool, dict, list})  # never a model: handed on as is


def _validator_for(name: str, annotation: Any, what: str) -> Callable[[Any], Any] | None:
    try:
        return validator(annotation)
    except Exception as error:
        raise ConfigurationError(
            f"Node '{name}': cannot validate its {what} type {annotation!r}: {error}"
        ) from error


def _mismatch(name: str, what: str, annotation: Any, error: ValidationError) -> WorkflowDataError:
    details = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or '(value)'}: {item['msg']}"
        for item in error.errors()
    )
    wanted = getattr(annotation, "__name__", annotation)
    return WorkflowDataError(f"Node '{name}': {what} does not match {wanted}: {details}")


class StartNode(BaseNode):
    """The entry point of a graph; it never runs. Its output is the workflow's input."""

    def handed(self, output: Any) -> Any:
        return output  # the input as given


START = StartNode(name="START")

_SYNC, _CORO, _GEN, _ASYNC_GEN = range(4)


class FunctionNode(BaseNode):
    """A node that calls a function: sync or async, plain or a generator.

    Parameters are bound as ``engine.binding.read_signature`` says: ``ctx``, ``node_input``,
    and the others from session state; with ``parameter_binding="node_input"`` (ADK's, for a
    function used as a tool) from the fields of the node's input instead.
    """

    func: Callable[..., Any]
    parameter_binding: Literal["state", "node_input"] = "state"

    def __init__(self, func: Callable[..., Any] | None = None, /, **data: Any) -> None:
        if func is not None:
            data["func"] = func
        target = data.get("func")
        if target is not None and "name" not in data:
            data["name"] = getattr(target, "__name__", "")
        super().__init__(**data)
        # Read here, not in model_post_init, so a ConfigurationError is not wrapped by pydantic.
        signature = self.signature
        # As in ADK, a pydantic model annotation becomes the schema; any other annotation is
        # still checked (``input_type``/``output_type``) but is no schema.
        if self.input_schema is None and is_model(signature.input_type):
            self.input_schema = signature.input_type
        if self.output_schema is None and is_model(signature.output_type):
            self.output_schema = signature.output_type
        if self.input_type is None:  # an explicit schema set it already (model_post_init)
            self.input_type = signature.input_type
        if self.output_type is None:
            self.output_type = signature.output_type
        if self.state_schema is not None:
            check_state_parameters(self.state_schema, self.name, signature.state_names)
        self.output_validator  # noqa: B018 - fail at construction on an unusable type
        self.input_validator  # noqa: B018

    @cached_property
    def signature(self) -> Signature:
        """Which parameter gets the context, which the input, which come from state."""
        return read_signature(self.func, self.name, Context, self.parameter_binding == "node_input")

    @cached_property
    def style(self) -> int:
        func = self.func
        if inspect.isasyncgenfunction(func):
            return _ASYNC_GEN
        if inspect.isgeneratorfunction(func):
            return _GEN
        if inspect.iscoroutinefunction(func):
            return _CORO
        return _SYNC

    @cached_property
    def plain_call(self) -> Callable[[Context, Any], Any] | None:
        if self.style != _SYNC:
            return None
        func, signature = self.func, self.signature
        only = signature.input_only
        if only is not None:
            return lambda ctx, node_input: func(**{only: node_input})
        # The name is read per call: a copy made with node(..., name=...) shares this function.
        return lambda ctx, node_input: func(**bind(signature, ctx.node.name, ctx, node_input))

    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        """Call the function: a plain return comes back as ``Returned``, a coroutine as itself.

        Only generator functions go through an async generator: a plain call is most nodes,
        and a generator per call was a good part of a node's cost.
        """
        signature = self.signature
        only = signature.input_only
        if only is not None:
            kwargs: dict[str, Any] = {only: node_input}
        else:
            kwargs = bind(signature, self.name, ctx, node_input)
        style = self.style
        if style == _SYNC:
            return Returned(self.func(**kwargs))
        if style == _GEN:
            return _iterate(self.func(**kwargs))
        return self.func(**kwargs)  # a coroutine (its return value is the output) or an async generator


@dataclass(slots=True)
class Returned:
    """What a plain function returned: the node's output, or an ``Event``/``RequestInput``."""

    value: Any


async def _iterate(items: Any) -> AsyncGenerator[Any, None]:
    for item in items:
        yield item


class JoinNode(BaseNode):
    """Waits for every predecessor and outputs ``{predecessor_name: output}``.

    Its ``input_schema`` validates each predecessor's output (a None one passes), not the
    joined dict, as in ADK.
    """

    def check_input(self, value: Any) -> Any:
        if self.input_validator is None or not isinstance(value, dict):
            return super().check_input(value)
        return {
            name: None if item is None else dumped(super(JoinNode, self).check_input(item))
            for name, item in value.items()
        }

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        ctx.output = node_input
        return
        yield  # pragma: no cover


class ParallelWorker(BaseNode):
    """Runs ``worker`` once per item of a list input (any other input is one item),
    concurrently and bounded.

    Results come back in input order. Every item runs even when some interrupt or fail;
    on resume only the failed or interrupted items run again.
    """

    worker: BaseNode
    max_parallel_workers: int = 8
    rerun_on_resume: bool = True

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        if not isinstance(node_input, list | tuple):
            node_input = [node_input]  # one item, as ADK runs it
        calls = [ctx.run_node(self.worker, item) for item in node_input]
        slots = asyncio.Semaphore(max(self.max_parallel_workers, 1))

        async def bounded(call: Any) -> Any:
            async with slots:
                return await call

        items = [asyncio.ensure_future(bounded(call)) for call in calls]
        results = await _first_failure_cancels(items)
        waiting = [r for r in results if isinstance(r, NodeInterruptedError)]
        if waiting:
            raise NodeInterruptedError([i for r in waiting for i in r.interrupt_ids], ctx.node_path)
        yield list(results)


async def _first_failure_cancels(items: Sequence[asyncio.Future[Any]]) -> list[Any]:
    """Each item's result or interrupt, in order; the first item to fail (interrupts aside)
    cancels the ones still running, as ADK's parallel worker does, and its error is raised."""
    running = set(items)
    try:
        while running:
            done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            failed = [
                item
                for item in items
                if item in done and not isinstance(item.exception(), NodeInterruptedError | None)
            ]
            if failed:
                error = failed[0].exception()
                assert error is not None
                raise error
    finally:
        for item in running:
            item.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    return [item.exception() or item.result() for item in items]


_wrapped: weakref.WeakKeyDictionary[Callable[..., Any], FunctionNode] = weakref.WeakKeyDictionary()


def as_node(node_like: Any) -> BaseNode:
    """Return ``node_like`` as a node, wrapping a plain function in a ``FunctionNode``.

    A function gets one wrapper, reused wherever it appears, so it is the same node in
    every edge and every ``ctx.run_node`` call.
    """
    if isinstance(node_like, BaseNode):
        return node_like
    if callable(node_like):
        try:
            made = _wrapped.get(node_like)
        except TypeError:  # not weak-referenceable (a builtin, say): wrap every time
            return FunctionNode(node_like)
        if made is None:
            made = _wrapped[node_like] = FunctionNode(node_like)
        return made
    raise ConfigurationError(f"{node_like!r} is not a node or a function")


def node(
    node_like: Any = None,
    /,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    parameter_binding: Literal["state", "node_input"] | None = None,
) -> Any:
    """Make a node from a function, as ``@node``, ``@node(...)`` or ``node(fn, ...)``.

    Given an existing node, returns a copy with the options applied.
    """
    if max_parallel_workers is not None and not parallel_worker:
        raise ConfigurationError("max_parallel_workers needs parallel_worker=True")
    options = {
        key: value
        for key, value in (
            ("name", name),
            ("rerun_on_resume", rerun_on_resume),
            ("retry_config", retry_config),
            ("timeout", timeout),
            ("parameter_binding", parameter_binding),
        )
        if value is not None
    }

    def build(target: Any) -> BaseNode:
        made: BaseNode
        if isinstance(target, FunctionNode) and parameter_binding is not None:
            # Its signature and the types read from it change: build it again.
            kept = {key: getattr(target, key) for key in ("description", "wait_for_output", "state_schema")}
            made = FunctionNode(target.func, **{"name": target.name, **kept, **options})
        elif isinstance(target, BaseNode):
            made = target.model_copy(update=options) if options else target
        elif callable(target):
            made = FunctionNode(target, **options)
        else:
            raise ConfigurationError(f"@node needs a function or a node, got {target!r}")
        if parallel_worker:
            return ParallelWorker(
                name=made.name,
                worker=made,
                description=made.description,
                max_parallel_workers=max_parallel_workers or 8,
            )
        return made

    if node_like is None:
        return build
    return build(node_like)
