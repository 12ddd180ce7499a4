"""A resume folds only what was appended since the session's last turn (engine.folded)."""

from __future__ import annotations

from typing import Any

from engine import Context, FoldedLogs, InMemoryEventStore, RequestInput, Runner, Workflow, node

from .builders import single


class ReadingStore(InMemoryEventStore):
    """Remembers where each read of a log started; can drop a session (as a retention job would)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Any]:
        self.reads.append(after_seq)
        return await super().list_events(session_id, after_seq)

    def delete_session(self, session_id: str) -> None:
        del self._logs[session_id]


@node
def inc(node_input: int) -> int:
    return node_input + 1


@node
def ask(node_input: int):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id=f"q{node_input}", message=f"answer {node_input}")


def rounds(name: str = "wf") -> Workflow:
    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: int) -> int:
        total = 0
        for i in range(3):
            total += await ctx.run_node(inc, i)
            total += await ctx.run_node(ask, i)
        return total

    return single(orch, name=name)


async def answer_all(runner: Runner, session_id: str) -> Any:
    result = await runner.result(session_id)
    while result.status == "waiting":
        (question,) = result.interrupts
        result = await runner.resume(session_id, {question.id: 10})
    return result


async def test_a_resume_reads_only_the_events_after_what_the_last_turn_folded() -> None:
    store = ReadingStore()
    runner = Runner(rounds(), store=store)
    first = await runner.run(0)
    store.reads.clear()
    log_before = len(await store.list_events(first.session_id))
    store.reads.clear()

    second = await runner.resume(first.session_id, {"q0": 10})

    assert second.status == "waiting" and [i.id for i in second.interrupts] == ["q1"]
    assert store.reads == [log_before]  # nothing before it was read again
    done = await answer_all(runner, first.session_id)
    assert (done.status, done.output) == ("completed", 1 + 2 + 3 + 30)
    assert 0 not in store.reads


async def test_nodes_another_runner_ran_meanwhile_mean_a_full_read_and_the_same_result() -> None:
    store = ReadingStore()
    wf = rounds()
    mine, theirs = Runner(wf, store=store), Runner(wf, store=store)
    first = await mine.run(0)
    await theirs.resume(first.session_id, {"q0": 10})  # another process took the run on
    store.reads.clear()

    result = await mine.resume(first.session_id, {"q1": 10})

    assert 0 in store.reads  # what it had folded was not the whole story: read it all
    assert result.status == "waiting" and [i.id for i in result.interrupts] == ["q2"]
    done = await mine.resume(first.session_id, {"q2": 10})
    assert (done.status, done.output) == ("completed", 36)


async def test_answers_recorded_by_another_runner_are_folded_on_top() -> None:
    store = ReadingStore()
    wf = rounds()
    mine, theirs = Runner(wf, store=store), Runner(wf, store=store)
    first = await mine.run(0)
    await theirs.answer(first.session_id, {"q0": 10})  # recorded elsewhere, not executed
    seen = len(await store.list_events(first.session_id)) - 1
    store.reads.clear()

    result = await mine.advance(first.session_id)

    assert store.reads[0] == seen  # only the answer was read
    assert [i.id for i in result.interrupts] == ["q1"]


async def test_a_session_made_again_under_the_same_id_is_read_afresh() -> None:
    store = ReadingStore()
    runner = Runner(rounds(), store=store)
    first = await runner.run(0, session_id="s")
    await runner.resume("s", {"q0": 10})
    store.delete_session("s")
    again = await runner.run(5, session_id="s")
    store.reads.clear()

    result = await runner.resume("s", {"q0": 1})

    assert first.status == again.status == "waiting"
    assert [i.id for i in result.interrupts] == ["q1"]
    done = await answer_all(runner, "s")
    assert done.output == 1 + 2 + 3 + 1 + 10 + 10


async def test_a_shared_cache_serves_runners_of_the_same_workflow_only() -> None:
    store, folded = ReadingStore(), FoldedLogs()
    wf = rounds()
    first = await Runner(wf, store=store, folded=folded).run(0)
    store.reads.clear()

    await Runner(rounds(), store=store, folded=folded).answer(first.session_id, {"q0": 10})
    assert store.reads == [0]  # another workflow object: its replay check was not done here
    assert len(folded) == 0  # and what that answer folded, unchecked, is not kept either
    store.reads.clear()
    await Runner(rounds(), store=store, folded=folded).advance(first.session_id)
    assert 0 in store.reads
    store.reads.clear()

    result = await Runner(wf, store=store, folded=folded).result(first.session_id)
    assert store.reads == [0] and result.status == "waiting"


async def test_the_least_recently_kept_run_goes_past_the_limit() -> None:
    store, folded = ReadingStore(), FoldedLogs(max_runs=2)
    runner = Runner(rounds(), store=store, folded=folded)
    ids = [(await runner.run(0)).session_id for _ in range(3)]
    assert len(folded) == 2
    store.reads.clear()

    await runner.resume(ids[0], {"q0": 10})  # dropped: read in full
    await runner.resume(ids[2], {"q0": 10})  # kept: read from where it was

    assert store.reads[0] == 0 and store.reads[1] > 0


async def test_a_finished_run_is_not_kept() -> None:
    folded = FoldedLogs()
    runner = Runner(single(inc), folded=folded)
    assert (await runner.run(1)).output == 2
    assert len(folded) == 0


async def test_a_node_changing_what_the_log_gave_it_changes_nothing_the_next_turn_replays() -> None:
    seen: list[Any] = []

    @node
    def ids(node_input: int) -> Any:
        return [1, 2]

    @node
    def settings(node_input: int) -> Any:
        return {"tags": ["a"], "n": 1}

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: int) -> Any:
        got, conf = await ctx.run_node(ids, 0), await ctx.run_node(settings, 0)
        seen.append((list(got), {"tags": list(conf["tags"]), "n": conf["n"]}))
        got.append(99)  # node code may change what it was given
        conf["tags"].append("changed")
        for i in range(2):
            answer = await ctx.run_node(ask, i)
            answer.append("changed too")
        return got

    store = InMemoryEventStore()
    runner = Runner(single(orch), store=store)
    first = await runner.run(0)
    await runner.resume(first.session_id, {"q0": ["x"]})
    done = await runner.resume(first.session_id, {"q1": ["y"]})

    assert done.output == [1, 2, 99]
    assert seen == [([1, 2], {"tags": ["a"], "n": 1})] * 3  # every turn replays what was recorded
    fresh_read = InMemoryEventStore.load(store.dump(first.session_id))
    events = await fresh_read.list_events(first.session_id)
    outputs = [e.output for e in events if e.kind == "completed"]
    answers = [e.answer.value for e in events if e.kind == "answer" and e.answer is not None]
    assert [1, 2] in outputs and {"tags": ["a"], "n": 1} in outputs and ["x"] in answers
