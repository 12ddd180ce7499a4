"""Issue 2, item 1: every way to make a node, how its parameters are bound, its types."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    BaseNode,
    Context,
    Event,
    FunctionNode,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
)
from engine.errors import ConfigurationError


def one_step(step: Any, name: str = "wf") -> Workflow:
    return Workflow(name=name, edges=[(START, step)])


async def run_one(step: Any, node_input: Any = None) -> Any:
    result = await Runner(one_step(step)).run(node_input)
    assert result.status == "completed", result.error
    return result.output


# -- ways to make a node -------------------------------------------------------------


async def test_bare_decorator_makes_a_function_node() -> None:
    @node
    def double(node_input: int) -> int:
        return node_input * 2

    assert isinstance(double, FunctionNode)
    assert double.name == "double"
    assert await run_one(double, 4) == 8


async def test_decorator_factory_with_and_without_options() -> None:
    @node()
    def plain(node_input: int) -> int:
        return node_input + 1

    @node(name="renamed", rerun_on_resume=True, timeout=5, retry_config=RetryConfig(max_attempts=2))
    def configured(node_input: int) -> int:
        return node_input + 2

    assert isinstance(plain, FunctionNode) and plain.name == "plain"
    assert configured.name == "renamed"
    assert configured.rerun_on_resume is True
    assert configured.timeout == 5
    assert configured.retry_config == RetryConfig(max_attempts=2)
    assert await run_one(plain, 1) == 2
    assert await run_one(configured, 1) == 3


async def test_node_called_on_a_function() -> None:
    def triple(node_input: int) -> int:
        return node_input * 3

    made = node(triple, name="times_three")
    assert isinstance(made, FunctionNode)
    assert made.name == "times_three"
    assert made.func is triple
    assert await run_one(made, 2) == 6


async def test_function_node_positional_and_keyword_func() -> None:
    def neg(node_input: int) -> int:
        return -node_input

    positional = FunctionNode(neg)
    keyword = FunctionNode(func=neg, name="negate")
    assert positional.name == "neg"
    assert keyword.name == "negate"
    assert await run_one(positional, 3) == -3
    assert await run_one(keyword, 4) == -4


async def test_node_on_an_existing_node_returns_a_configured_copy() -> None:
    @node
    def base(node_input: int) -> int:
        return node_input

    copy = node(base, name="copy", rerun_on_resume=True)
    assert copy is not base
    assert copy.name == "copy" and copy.rerun_on_resume is True
    assert base.name == "base" and base.rerun_on_resume is False
    assert await run_one(copy, 7) == 7


async def test_bare_function_in_edges_is_wrapped(read_log: Any) -> None:
    def first(node_input: str) -> str:
        return node_input + "!"

    def second(node_input: str) -> str:
        return node_input * 2

    runner = Runner(Workflow(name="wf", edges=[(START, first, second)]))
    result = await runner.run("hi")
    assert result.output == "hi!hi!"
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/first@1", "wf@1/second@1"]


def test_the_same_function_twice_in_edges_is_one_node() -> None:
    def a(node_input: Any) -> Any:
        return node_input

    def b(node_input: Any) -> Any:
        return node_input

    def c(node_input: Any) -> Any:
        return node_input

    wf = Workflow(name="wf", edges=[(START, a, b), (a, c)])
    described = wf.describe()
    assert sorted(n["name"] for n in described["nodes"]) == ["START", "a", "b", "c"]


def test_node_name_must_be_an_identifier() -> None:
    with pytest.raises(ValueError, match="identifier"):
        FunctionNode(lambda node_input: node_input, name="not valid")


# -- sync, async, generators -----------------------------------------------------------


async def test_sync_function() -> None:
    def f(node_input: str) -> str:
        return f"sync {node_input}"

    assert await run_one(f, "x") == "sync x"


async def test_async_function() -> None:
    async def f(node_input: str) -> str:
        return f"async {node_input}"

    assert await run_one(f, "x") == "async x"


async def test_sync_generator(read_log: Any) -> None:
    def f(node_input: str):
        yield Event(state={"seen": node_input})
        yield f"gen {node_input}"

    runner = Runner(one_step(f))
    result = await runner.run("x")
    assert result.output == "gen x"
    log = await read_log(runner, result.session_id)
    assert log.state() == {"seen": "x"}
    assert [e.kind for e in log.output_events()] == ["output"]


async def test_async_generator() -> None:
    async def f(node_input: str):
        yield f"agen {node_input}"

    assert await run_one(f, "x") == "agen x"


async def test_function_returning_none_has_no_output(read_log: Any) -> None:
    def nothing(node_input: Any) -> None:
        return None

    runner = Runner(one_step(nothing))
    result = await runner.run("x")
    assert result.status == "completed"
    assert result.output is None
    log = await read_log(runner, result.session_id)
    assert log.output_events() == []


async def test_base_node_subclass() -> None:
    class Greeter(BaseNode):
        greeting: str = "hello"

        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield f"{self.greeting} {node_input} from {ctx.node_path}"

    assert await run_one(Greeter(name="greeter", greeting="hi"), "ann") == "hi ann from wf@1/greeter@1"


async def test_base_node_subclass_with_ctx_output() -> None:
    class Setter(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.output = node_input + 1
            return
            yield

    assert await run_one(Setter(name="setter"), 41) == 42


async def test_function_may_return_an_event_or_a_request_input(read_log: Any) -> None:
    def route_it(node_input: Any) -> Any:
        return Event(output=node_input, route="go")

    def ask(node_input: Any) -> Any:
        return RequestInput(message="ok?", interrupt_id="ok")

    def after(node_input: Any) -> Any:
        return {"answer": node_input}

    runner = Runner(Workflow(name="wf", edges=[(START, route_it, {"go": ask}), (ask, after)]))
    waiting = await runner.run("x")
    assert [i.id for i in waiting.interrupts] == ["ok"]
    log = await read_log(runner, waiting.session_id)
    assert log.routes() == {"wf@1/route_it@1": "go"}
    assert log.outputs()["wf@1/route_it@1"] == "x"
    result = await runner.resume(waiting.session_id, {"ok": "yes"})
    assert result.output == {"answer": "yes"}


def test_a_non_node_in_edges_is_rejected() -> None:
    with pytest.raises(ConfigurationError):
        Workflow(name="wf", edges=[(START, 42)])


async def test_base_node_with_a_coroutine_run_impl() -> None:
    class Plain(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:  # type: ignore[override]
            return f"plain {node_input}"

    assert await run_one(Plain(name="plain"), "x") == "plain x"


def test_an_unresolvable_annotation_fails_naming_the_node() -> None:
    def broken(node_input: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "never"

    with pytest.raises(ConfigurationError, match="broken"):
        Workflow(name="wf", edges=[(START, broken)])


# -- parameter binding -----------------------------------------------------------------


async def test_ctx_bound_by_name_and_by_annotation() -> None:
    def by_name(ctx, node_input: str) -> str:  # type: ignore[no-untyped-def]
        return f"{ctx.node_path}:{node_input}"

    def by_annotation(context: Context, node_input: str) -> str:
        return f"{context.node_path}:{node_input}"

    assert await run_one(by_name, "a") == "wf@1/by_name@1:a"
    assert await run_one(by_annotation, "b") == "wf@1/by_annotation@1:b"


async def test_function_without_parameters_or_with_only_ctx() -> None:
    def constant() -> str:
        return "constant"

    def path_only(ctx: Context) -> str:
        return ctx.node_path

    assert await run_one(constant, "ignored") == "constant"
    assert await run_one(path_only, "ignored") == "wf@1/path_only@1"


async def test_keyword_only_parameters_come_from_state() -> None:
    def setup(ctx: Context, node_input: Any) -> Any:
        ctx.state["limit"] = 3
        return node_input

    def cap(node_input: list[int], *, limit: int) -> list[int]:
        return node_input[:limit]

    result = await Runner(Workflow(name="wf", edges=[(START, setup, cap)])).run([1, 2, 3, 4, 5])
    assert result.output == [1, 2, 3]


async def test_context_describes_the_execution() -> None:
    seen: list[tuple[Any, ...]] = []

    def look(ctx: Context, node_input: Any) -> Any:
        seen.append((ctx.node.name, ctx.node_path, ctx.run_id, ctx.session_id, ctx.event_author))
        ctx.route = "again" if len(seen) < 2 else "done"
        return node_input

    looker = FunctionNode(look, name="looker")
    result = await Runner(Workflow(name="wf", edges=[(START, looker, {"again": looker})])).run(None)
    sid = result.session_id
    assert seen == [
        ("looker", "wf@1/looker@1", "1", sid, "wf"),
        ("looker", "wf@1/looker@2", "2", sid, "wf"),
    ]


async def test_first_parameter_without_default_gets_the_input() -> None:
    def city_time_function(city: str) -> str:
        return f"time in {city}"

    def code_workflow(ctx: Context, user_request: str) -> str:
        return f"{ctx.node_path} coding {user_request}"

    assert await run_one(city_time_function, "Paris") == "time in Paris"
    assert await run_one(code_workflow, "a parser") == "wf@1/code_workflow@1 coding a parser"


async def test_other_parameters_come_from_state_then_defaults() -> None:
    def setup(node_input: str):
        yield Event(state={"greeting": "hola", "punct": "?"})
        yield node_input

    def greet(node_input: str, greeting: str, punct: str = "!", suffix: str = ".") -> str:
        return f"{greeting} {node_input}{punct}{suffix}"

    runner = Runner(Workflow(name="wf", edges=[(START, setup, greet)]))
    result = await runner.run("ana")
    assert result.output == "hola ana?."


async def test_state_parameter_written_by_ctx_state_in_an_earlier_node() -> None:
    def setup(ctx: Context, node_input: int) -> int:
        ctx.state["factor"] = 10
        return node_input

    def scale(node_input: int, factor: int) -> int:
        return node_input * factor

    result = await Runner(Workflow(name="wf", edges=[(START, setup, scale)])).run(4)
    assert result.output == 40


async def test_missing_parameter_fails_naming_parameter_and_node(read_log: Any) -> None:
    def needs_budget(node_input: str, budget: int) -> str:
        return f"{node_input}:{budget}"

    runner = Runner(one_step(needs_budget))
    result = await runner.run("x")
    assert result.status == "failed"
    assert "budget" in result.error
    assert "needs_budget" in result.error
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 1
    assert log.errors()[0].node_path == "wf@1/needs_budget@1"


# -- types and validation --------------------------------------------------------------


class Order(BaseModel):
    item: str
    quantity: int


class Receipt(BaseModel):
    text: str


def test_types_are_inferred_from_annotations() -> None:
    def take(node_input: Order) -> Receipt:
        return Receipt(text=node_input.item)

    made = FunctionNode(take)
    assert made.input_type is Order
    assert made.output_type is Receipt

    def untyped(node_input):  # type: ignore[no-untyped-def]
        return node_input

    plain = FunctionNode(untyped)
    assert plain.input_type is None and plain.output_type is None


async def test_types_of_models_defined_in_a_function() -> None:
    # This module uses ``from __future__ import annotations``: these hints are strings
    # naming classes local to the test.
    class LocalOrder(BaseModel):
        item: str
        quantity: int

    def take(node_input: LocalOrder) -> str:
        assert isinstance(node_input, LocalOrder)
        return f"{node_input.quantity} x {node_input.item}"

    made = FunctionNode(take)
    assert made.input_type is LocalOrder
    wf = one_step(made)
    assert wf.input_json_schema == LocalOrder.model_json_schema()
    assert (await Runner(wf).run({"item": "pen", "quantity": 2})).output == "2 x pen"


def test_workflow_input_schema_comes_from_the_first_node() -> None:
    def take(node_input: Order) -> str:
        return node_input.item

    wf = one_step(take)
    assert wf.input_json_schema == Order.model_json_schema()
    assert wf.describe()["input_schema"] == Order.model_json_schema()


def test_workflow_input_schema_explicit() -> None:
    def take(node_input: Any) -> Any:
        return node_input

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert Workflow(name="wf", edges=[(START, take)], input_schema=schema).input_json_schema == schema
    typed = Workflow(name="wf", edges=[(START, take)], input_schema=Order)
    assert typed.input_schema is Order  # ADK's field keeps what was declared
    assert typed.input_json_schema == Order.model_json_schema()


def test_workflow_input_schema_is_none_when_nothing_declares_it() -> None:
    def take(node_input):  # type: ignore[no-untyped-def]
        return node_input

    assert one_step(take).input_schema is None
    assert one_step(take).input_json_schema is None


async def test_pydantic_input_is_validated_into_the_model() -> None:
    def take(node_input: Order) -> str:
        assert isinstance(node_input, Order)
        return f"{node_input.quantity} x {node_input.item}"

    assert await run_one(take, {"item": "pen", "quantity": "3"}) == "3 x pen"


async def test_input_validation_failure_names_node_and_field(read_log: Any) -> None:
    calls = []

    def take_order(node_input: Order) -> str:
        calls.append(node_input)
        return node_input.item

    runner = Runner(one_step(take_order))
    result = await runner.run({"item": "pen", "quantity": "many"})
    assert result.status == "failed"
    assert "take_order" in result.error
    assert "quantity" in result.error
    assert calls == []
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 1


async def test_returned_value_is_validated_against_the_return_annotation() -> None:
    def wrong(node_input: Any) -> int:
        return "not a number"  # type: ignore[return-value]

    result = await Runner(one_step(wrong)).run("x")
    assert result.status == "failed"
    assert "wrong" in result.error


async def test_returned_value_is_coerced_by_the_return_annotation() -> None:
    def to_receipt(node_input: str) -> Receipt:
        return {"text": node_input}  # type: ignore[return-value]

    def read(node_input: Receipt) -> str:
        assert isinstance(node_input, Receipt)
        return node_input.text

    result = await Runner(Workflow(name="wf", edges=[(START, to_receipt, read)])).run("ok")
    assert result.output == "ok"


async def test_undeclared_values_pass_between_nodes_unchanged() -> None:
    seen: list[Any] = []

    def make(node_input):  # type: ignore[no-untyped-def]
        return ("a", 1)

    def take(node_input):  # type: ignore[no-untyped-def]
        seen.append(node_input)
        return "done"

    result = await Runner(Workflow(name="wf", edges=[(START, make, take)])).run(None)
    assert result.output == "done"
    assert seen == [("a", 1)]
    assert type(seen[0]) is tuple


async def test_unpersistable_output_fails_naming_node_and_type() -> None:
    class Opaque:
        pass

    def make(node_input: Any):  # type: ignore[no-untyped-def]
        yield Opaque()

    result = await Runner(one_step(make)).run(None)
    assert result.status == "failed"
    assert "make" in result.error
    assert "Opaque" in result.error


def test_max_parallel_workers_without_parallel_worker_is_rejected() -> None:
    def f(node_input: Any) -> Any:
        return node_input

    with pytest.raises(ConfigurationError):
        node(f, max_parallel_workers=2)


# BaseNode subclasses declare types through the ``input_type`` / ``output_type`` fields.


class TypeName(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield type(node_input).__name__


class EmitsOrderData(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield {"item": "pen", "quantity": 2}


async def test_base_node_input_type_is_validated() -> None:
    wf = one_step(TypeName(name="typed", input_type=Order))
    assert (await Runner(wf).run({"item": "pen", "quantity": 1})).output == "Order"
    failed = await Runner(wf).run({"item": "pen"})
    assert failed.status == "failed"
    assert "typed" in failed.error and "quantity" in failed.error


async def test_base_node_output_schema_reaches_the_successor_as_json_data() -> None:
    # Validated into Order, the output reaches a successor as ADK hands it: JSON data.
    seen: list[Any] = []

    def after(node_input: Any) -> str:
        seen.append(node_input)
        return type(node_input).__name__

    wf = Workflow(name="wf", edges=[(START, EmitsOrderData(name="emit", output_schema=Order), after)])
    assert (await Runner(wf).run(None)).output == "dict"
    assert seen == [{"item": "pen", "quantity": 2}]
