"""Workflow versions: explicit, or a fingerprint of the graph that is the same in every process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator

from engine import START, Event, FunctionNode, InMemoryEventStore, RetryConfig, Runner, Workflow, node
from engine.errors import ConfigurationError
from engine.fingerprint import type_name

ROOT = Path(__file__).resolve().parents[2]


def one(node_input: int) -> int:
    return node_input


def two(node_input: int) -> int:
    return node_input + 1


def other_body(node_input: int) -> int:
    return node_input * 3


def pick(node_input: int) -> Event:
    return Event(output=node_input, route="a")


def build(*edges: Any, **options: Any) -> Workflow:
    return Workflow(name="wf", edges=list(edges), **options)


GRAPH = """
from pydantic import BaseModel
from engine import START, Event, JoinNode, RetryConfig, Workflow, node

class Order(BaseModel):
    sku: str

def triage(node_input: Order) -> Event:
    return Event(output=node_input, route="big")

def left(node_input: dict) -> dict:
    return node_input

def right(node_input: dict) -> dict:
    return node_input

both = JoinNode(name="both")
workflow = Workflow(
    name="orders",
    edges=[
        (START, node(triage, retry_config=RetryConfig(max_attempts=2, exceptions=[ValueError])),
         {"big": (left, right), "small": left, True: right}),
        ((left, right), both),
    ],
)
"""


def test_the_default_version_is_the_same_in_other_processes_and_hash_seeds() -> None:
    code = GRAPH + "print(workflow.version)"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("0", "1", "12345")
    }
    [version] = seen
    assert len(version) == 12


def test_type_names_leave_out_object_addresses() -> None:
    named = type_name(Annotated[dict[str, Any], AfterValidator(lambda d: d)])

    assert "0x" not in named and named.startswith("typing.Annotated[dict[str, typing.Any], AfterValidator")


def test_the_default_version_follows_the_graph_not_the_bodies() -> None:
    base = build((START, node(one, name="a"), node(two, name="b"))).version

    assert build((START, node(other_body, name="a"), node(two, name="b"))).version == base  # a body
    assert build((START, node(one, name="a"), node(two, name="c"))).version != base  # a name
    assert build((START, node(two, name="b"), node(one, name="a"))).version != base  # the order
    assert build((START, node(one, name="a", rerun_on_resume=True), node(two, name="b"))).version != base
    retried = node(one, name="a", retry_config=RetryConfig(max_attempts=2, exceptions=[ValueError]))
    assert build((START, retried, node(two, name="b"))).version != base  # an option
    assert build((START, node(one, name="a"), node(two, name="b")), max_concurrency=2).version != base

    routed = build((START, node(pick, name="p"), {"a": node(one, name="a")})).version
    assert build((START, node(pick, name="p"), {"x": node(one, name="a")})).version != routed  # a route


def test_an_explicit_version_is_kept_and_recorded_by_each_run() -> None:
    assert build((START, one), version="3").version == "3"
    assert build((START, one), version=3).version == "3"
    assert build((START, one), version="2025.1-b").describe()["version"] == "2025.1-b"


@pytest.mark.parametrize("bad", ["", " ", "a b", "x" * 65, True, 1.5])
def test_a_bad_version_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="version"):
        build((START, one), version=bad)


async def test_every_run_records_its_version() -> None:
    store = InMemoryEventStore()
    wf = build((START, one), version="7")

    result = await Runner(wf, store=store).run(1)

    assert (await store.get_session(result.session_id)).version == "7"
    assert store.dump(result.session_id)["version"] == "7"


def test_wait_for_output_and_parameter_binding_change_the_default_version() -> None:
    """Issue 25: both change what a recorded log replays to, so they name a new version."""

    def step(node_input: Any) -> Any:
        return node_input

    plain = Workflow(name="wf", edges=[(START, FunctionNode(step))]).version
    waits = Workflow(name="wf", edges=[(START, FunctionNode(step, wait_for_output=True))]).version
    fields = Workflow(name="wf", edges=[(START, FunctionNode(step, parameter_binding="node_input"))]).version
    assert len({plain, waits, fields}) == 3
