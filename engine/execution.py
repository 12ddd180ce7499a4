"""Executing nodes within one turn of a session: replay, attempts, events, children."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic import BaseModel

from .answers import check_schema
from .asking import asked_for_other, input_digest
from .context import CheckedState, Context, Execution, State
from .errors import (
    InterruptTimeoutError,
    NodeInterruptedError,
    NodeTimeoutError,
    NodeUsageError,
    RuleViolation,
    WorkflowError,
    child_error,
    dynamic_node_failed,
)
from .events import ErrorInfo, Event, Interrupt, RequestInput
from .gate import NodeGate
from .human import NO_TIMEOUTS, Directory, HumanPolicy, asked_policy, split_timed_out
from .limits import check_id, check_text, check_value, safe_text
from .nodes import BaseNode, Returned, as_node
from .outcome import Outcome, checked_route, split_group
from .replay import Action, NodeRecord, ReplayIndex, answers_as_output, decide, forwarded_output
from .state_schema import check_state_delta
from .tracebacks import formatted
from .values import fresh, is_plain_json, json_schema, to_json
from .writer import LogWriter, draft


def _kind_of(fields: dict[str, Any]) -> str:
    for kind in ("output", "route", "state"):
        if kind in fields:
            return kind
    return "message"


def _child_author(parent: Execution) -> str:
    """Events are authored by the nearest enclosing workflow."""
    return parent.node.name if parent.node.is_workflow else parent.author


def _stored_output(ex: Execution, output: Any) -> Any:
    """The output as the log keeps it (the error message is built only when it is needed);
    never the object the node's caller gets (a list it changes would change the log)."""
    if is_plain_json(output):
        return output[:] if type(output) is list else output
    return to_json(output, f"The output of node {ex.path}")


def _defer(ex: Execution, event: Event) -> None:
    """A returned ``Event`` is the node's last word: its fields ride on the completed event,
    as a returned value does, instead of an event of their own just before it."""
    if event.output is not None:
        ex.set_output(event.output)  # ignored after a use_as_output delegate, as when yielded
    if event.route is not None:
        ex.route = event.route
        ex.route_pending = True
    if event.state:
        state = ex.state
        for key, value in event.state.items():
            state[key] = value


_NO_ANSWERS: dict[str, Any] = {}  # a fresh execution's resume_inputs (only ever read)
_ANY_INPUT: Any = object()  # ``SessionRun.replay`` given no input: a record is not checked for it


async def _ready(outcome: Outcome) -> Outcome:
    return outcome


class _Running:
    """In ``SessionRun.turn`` while a path executes and nobody else has asked for it yet."""


_RUNNING = _Running()


class SessionRun:
    """Runs one turn of a session: every node execution goes through ``execute``."""

    def __init__(
        self,
        session_id: str,
        index: ReplayIndex,
        writer: LogWriter,
        gate: NodeGate | None = None,
        directory: Directory | None = None,
    ) -> None:
        self.session_id = session_id
        self.index = index
        self.writer = writer
        self.gate = gate  # a host's drain stops new node executions there
        self.directory = directory  # checks questions' assignees (engine.human)
        self.turn: dict[str, Outcome | asyncio.Future[Outcome] | _Running] = {}
        self.failures: dict[int, tuple[BaseException, str]] = {}

    def failure_path(self, error: BaseException) -> str | None:
        """The node path where ``error`` was recorded, if it was."""
        seen = self.failures.get(id(error))
        return seen[1] if seen is not None and seen[0] is error else None

    # -- deciding -----------------------------------------------------------------

    def replay(self, node: BaseNode, path: str, node_input: Any = _ANY_INPUT) -> Outcome | None:
        """The recorded outcome of ``node`` at ``path`` when it need not run again; given
        ``node_input`` (a dynamic child's), none when its questions were asked on another
        input (``engine.asking``)."""
        record = self.index.records.get(path)
        if record is None:
            return None
        if node_input is not _ANY_INPUT and self._asked_for_other(path, node_input):
            return None
        action = decide(record, rerun_on_resume=node.rerun_on_resume, is_workflow=node.is_workflow)
        if action is Action.FORWARD:
            output = node.restore_output(forwarded_output(record, node.rerun_on_resume))
            return Outcome("completed", output, record.route, seq=record.seq, output_seq=record.output_seq)
        if action is Action.WAIT:
            return Outcome("waiting", interrupts=list(record.pending))
        return None

    def _asked_for_other(self, path: str, node_input: Any) -> bool:
        """Whether the questions recorded at ``path`` were asked on another input (engine.asking)."""
        asked_on = self.index.asked_on
        return bool(asked_on) and asked_for_other(asked_on, path, node_input)

    def execute(
        self,
        node: BaseNode,
        node_input: Any,
        path: str,
        targets: list[str],
        author: str,
        state_schema: type[BaseModel] | None = None,
        *,
        anew: bool = False,
    ) -> Coroutine[Any, Any, Outcome]:
        """Replay or run ``node`` at ``path``; ``targets`` are the paths its output counts for,
        ``state_schema`` the one its caller's state follows (the node's own overrides it);
        ``anew``: run it afresh whatever its record says.

        Decided here, at the call; the returned coroutine is the execution itself, so a node
        runs in its caller's coroutine plus one (it writes nothing before its first step).
        A node without a record (most of them) tests nothing else before it starts.
        """
        record = self.index.records.get(path)
        if record is not None and not anew:
            if record.edited_input is not None:
                node_input = record.edited_input  # an operator's retry gave this node a new input
            if self._asked_for_other(path, node_input):
                # Its recorded questions were asked on another input: their answers are not for
                # the question it asks now. It runs afresh and asks again (engine.asking).
                afresh = self.execute(node, node_input, path, targets, author, state_schema, anew=True)
                return self._ask_anew(record, path, author, afresh)
            action = decide(record, rerun_on_resume=node.rerun_on_resume, is_workflow=node.is_workflow)
            if action is Action.FORWARD:
                output = node.restore_output(forwarded_output(record, node.rerun_on_resume))
                return _ready(Outcome("completed", output, record.route, output_seq=record.output_seq))
            if action is Action.WAIT:
                return _ready(Outcome("waiting", interrupts=list(record.pending)))
            resume_inputs, timed_out = split_timed_out(record, path, self.index.people)
            resume_inputs = fresh(resume_inputs)  # the node's own: the log's answers stay as given
            if not timed_out and action is Action.ANSWER:
                return self._answer_as_output(node, record, path, targets, author)
        else:
            resume_inputs, timed_out = _NO_ANSWERS, NO_TIMEOUTS
        if state_schema is None and node.state_schema is None:
            state = State(self.index.state)
        else:
            schema = node.state_schema or state_schema
            assert schema is not None
            state = CheckedState(self.index.state, schema)
        execution = Execution(node, path, author, targets, resume_inputs, state, timed_out, node_input)
        if self.gate is not None:
            return self._gated(self.gate, execution, node_input)
        return self._run(execution, node_input)

    async def _ask_anew(
        self, record: NodeRecord, path: str, author: str, afresh: Coroutine[Any, Any, Outcome]
    ) -> Outcome:
        """Run ``afresh``, the execution of the node at ``path`` whose recorded questions were
        asked on another input.

        A question of that asking still pending is withdrawn first by an ``error`` event saying
        why (the stores drop the questions a failed execution asked), so nobody answers it.
        """
        if any(interrupt.node_path == path for interrupt in record.pending.values()):
            message = (
                f"Node {path} was given another input than the one its pending question was asked "
                "on; that question is withdrawn and asked again for the new input"
            )
            info = ErrorInfo(type="StaleQuestion", message=message)
            try:
                await self.writer.write(draft("error", path, author, error=info))
            except BaseException:
                afresh.close()  # never started
                raise
        return await afresh

    async def _gated(self, gate: NodeGate, ex: Execution, node_input: Any) -> Outcome:
        async with gate.passage(self.session_id, ex.path):
            return await self._run(ex, node_input)

    async def _answer_as_output(
        self, node: BaseNode, record: NodeRecord, path: str, targets: list[str], author: str
    ) -> Outcome:
        """A ``rerun_on_resume=False`` node whose questions are all answered outputs the answers,
        on the route it chose before asking.

        As in ADK, it writes no output event of its own: its ``completed`` marker carries no
        output, and replay takes the answers from the log again (``forwarded_output``). Only
        when its output counts for others too (a terminal node, a ``use_as_output`` child)
        does the marker carry it, for the workflow's output is stored in that event.
        """
        answers = answers_as_output(record)
        try:
            output = node.check_output(fresh(answers))
        except WorkflowError as error:
            self.failures[id(error)] = (error, path)
            info = ErrorInfo(type=type(error).__name__, message=safe_text(str(error)))
            await self.writer.write(draft("error", path, author, error=info))
            return Outcome("failed", error=error)
        if len(targets) > 1:
            await self.writer.write(draft("completed", path, author, output=answers, output_for=targets))
        else:
            await self.writer.write(draft("completed", path, author))
        return Outcome("completed", output, record.route, output_seq=record.output_seq)

    def static_executor(
        self, parent: Execution
    ) -> Callable[[BaseNode, Any, str, bool], Coroutine[Any, Any, Outcome]]:
        """How ``parent`` executes children at paths it chooses (see ``Context.child_hooks``)."""
        execute, author, inherited = self.execute, _child_author(parent), parent.targets
        schema = parent.state.schema

        def execute_child(
            node: BaseNode, node_input: Any, path: str, delegate: bool
        ) -> Coroutine[Any, Any, Outcome]:
            return execute(node, node_input, path, [path, *inherited] if delegate else [path], author, schema)

        return execute_child

    # -- running ------------------------------------------------------------------

    async def _run(self, ex: Execution, node_input: Any) -> Outcome:
        ex.task = asyncio.current_task()
        node = ex.node
        call = node.plain_call
        # A plain function runs without yielding to the loop, so nobody could see it running:
        # unless someone watches the run live, its ``started`` is written only when it does
        # more than return (asks, tells, fails) and a returned output is ONE event.
        seen = self.index.last_seq
        unstarted = call is not None and self.writer.publisher is None
        if not unstarted:
            self.writer.enqueue(draft("started", ex.path, ex.author, seen_seq=seen))
        ctx = Context(self, ex)
        while True:
            failure: BaseException | None = None
            interrupted = False
            try:
                checked = node.check_input(node_input)
                if call is None:
                    await self._attempt(ex, node._run_impl(ctx=ctx, node_input=checked))
                elif not self._took(ex, result := call(ctx, checked)):
                    if unstarted:
                        self._start_late(ex, seen)
                        unstarted = False
                    await self._attempt(ex, Returned(result))
            except NodeInterruptedError as signal:
                ex.add_interrupts(signal.interrupt_ids)
                interrupted = True
            except asyncio.CancelledError:
                for task in ex.spawned:  # children started with create_task stop with their caller
                    task.cancel()
                raise
            except BaseExceptionGroup as group:  # asyncio.TaskGroup
                self.writer.raise_if_broken()
                interrupted, failure = split_group(ex, group)
            except Exception as error:
                self.writer.raise_if_broken()  # the log refused an append: stop, do not retry
                failure = child_error(error)  # an uncaught DynamicNodeFailError: the child's own
            ex.exited = True
            if ex.spawned or ex.allocated > ex.begun:
                await self._drain(ex)
            # A broken rule wins; then the attempt's own error; then a sibling that failed
            # while the caller was already leaving (it could never have been caught).
            failure = ex.violation or failure or ex.child_failure
            if failure is None and ex.detached and not interrupted:
                failure = RuntimeError(
                    f"Node {ex.path} finished while its child {', '.join(ex.detached)} was waiting "
                    "for human input: a child started without awaiting ctx.run_node() (or whose "
                    "NodeInterruptedError was caught and not re-raised) cannot be resumed; await "
                    "every ctx.run_node() call, directly or through asyncio.gather"
                )
            if failure is None:
                try:
                    final, outcome = self._ending(ex)
                except WorkflowError as error:  # an output or state that cannot be stored
                    failure = error
                else:
                    if unstarted and final is not None:
                        final["seen_seq"] = seen  # it began here too
                    if final is not None and not self.writer.write_now(final):
                        await self.writer.flush()
                    if outcome.status == "completed" and ex.has_output:
                        if ex.output_seq:
                            outcome.output_seq = ex.output_seq
                        elif (record := self.index.records.get(ex.path)) is not None:
                            outcome.output_seq = record.output_seq  # its event's, just folded
                    return outcome
            if unstarted:
                self._start_late(ex, seen)
                unstarted = False
            await self._record_failure(ex, failure, node_input)
            policy = node.retry_config
            if policy is not None and policy.retries(failure, ex.attempt):
                await asyncio.sleep(policy.delay(ex.attempt))
                ex.new_attempt()
                continue
            return Outcome("failed", error=failure)

    def _start_late(self, ex: Execution, seen: int) -> None:
        """Queue the ``started`` a plain function's execution put off (see ``_run``)."""
        self.writer.enqueue(draft("started", ex.path, ex.author, seen_seq=seen))

    async def _attempt(self, ex: Execution, produced: Any) -> None:
        """Consume what ``_run_impl`` produced, within the node's timeout if it has one."""
        node = ex.node
        if node.timeout is None:
            await self._consume(ex, produced)
            return
        try:
            async with asyncio.timeout(node.timeout) as deadline:
                await self._consume(ex, produced)
        except TimeoutError as error:
            if deadline.expired():
                raise NodeTimeoutError(node.name, node.timeout) from error
            raise

    async def _consume(self, ex: Execution, produced: Any) -> None:
        """Emit what ``_run_impl`` yields; a coroutine ``_run_impl``'s return value is its output."""
        if type(produced) is Returned:
            result = produced.value
        elif hasattr(produced, "__anext__"):
            try:
                async for item in produced:
                    await self._emit(ex, item)
            finally:
                await produced.aclose()
            return
        else:
            result = await produced
        if not self._took(ex, result):
            await self._emit(ex, result)

    @staticmethod
    def _took(ex: Execution, result: Any) -> bool:
        """Take what a node returned as its output, or as its last word (a returned ``Event``);
        False: it has to be emitted (a message, a question)."""
        if result is None:
            return True
        if type(result) is Event and result.message is None and not result.long_running_tool_ids:
            _defer(ex, result)
            return True
        if isinstance(result, Event | RequestInput):
            return False
        ex.set_output(result)
        return True

    async def _drain(self, ex: Execution) -> None:
        """Let children started in other tasks (``asyncio.gather``) reach their outcome.

        Every sibling of a child that interrupted or failed still runs to its own end, so
        one turn collects all of their questions whatever the timing.
        """
        if ex.allocated > ex.begun:
            await asyncio.sleep(0)  # children just handed to create_task start and show up
        while True:
            running = [task for task in ex.spawned if not task.done()]
            if not running:
                break
            await asyncio.wait(running)
        for task in ex.spawned:
            if not task.cancelled():
                task.exception()  # the engine reports these outcomes itself

    async def _emit(self, ex: Execution, item: Any) -> None:
        if item is None:
            return
        if isinstance(item, RequestInput):
            ask = (
                item.interrupt_id,
                item.message,
                item.payload,
                item.response_schema,
                await asked_policy(item, ex.path, self.directory),
            )
            await self._ask(ex, [ask])
            return
        route = state = ids = message = branch = None
        if isinstance(item, Event):
            output, route, state, ids = item.output, item.route, item.state, item.long_running_tool_ids
            message, branch = item.message, item.branch
        else:
            output = item
        fields: dict[str, Any] = {}
        if message is not None and not ids:
            check_text(message, f"The message of node {ex.path}")
            fields["message"] = message  # with interrupts it is their question instead
        if output is not None and not ex.delegated:
            ex.set_output(output)
            fields["output"] = _stored_output(ex, output)
            fields["output_for"] = ex.targets
            ex.output_persisted = True
        if route is not None:
            ex.route = fields["route"] = checked_route(ex.path, route)
            ex.route_pending = False
        delta = ex.state.take_delta()
        if state:
            check_state_delta(ex.state.schema, state)
            delta = {**delta, **state} if delta else dict(state)
        if delta:
            fields["state"] = to_json(delta, f"The state written by node {ex.path}")
        if fields:
            if branch is not None:
                check_text(branch, f"The branch of node {ex.path}")
                fields["branch"] = branch
            if not self.writer.write_now(draft(_kind_of(fields), ex.path, ex.author, **fields)):
                await self.writer.flush()
        if ids:
            await self._ask(ex, [(interrupt_id, message, None, None, None) for interrupt_id in sorted(ids)])

    async def _ask(
        self, ex: Execution, asks: list[tuple[str, str | None, Any, Any, HumanPolicy | None]]
    ) -> None:
        drafts = []
        for interrupt_id, message, payload, schema, human in asks:
            if interrupt_id in ex.timed_out:  # its deadline passed with TIMEOUT_FAIL
                ex.timed_out = ex.timed_out - {interrupt_id}
                raise InterruptTimeoutError(interrupt_id, ex.path)
            holder = self.index.pending.get(interrupt_id)
            if holder is not None:
                if holder.node_path == ex.path:
                    # Asked again while still pending (a partial resume): the same question,
                    # with its deadline and claims, stated again in this turn's events, as ADK
                    # writes it again.
                    ex.add_interrupts([interrupt_id])
                    drafts.append(draft("interrupt", ex.path, ex.author, interrupt=holder))
                    continue
                raise ex.violate(
                    RuleViolation(
                        f"Interrupt id {interrupt_id!r} is already pending at {holder.node_path}; "
                        f"node {ex.path} asked for it too"
                    )
                )
            response_schema = json_schema(schema)
            if response_schema is not None:
                check_schema(response_schema, f"The response_schema asked by node {ex.path}")
                check_value(response_schema, f"The response_schema asked by node {ex.path}")
            check_id(interrupt_id, f"The interrupt id asked by node {ex.path}")
            if message is not None:
                check_text(message, f"The message asked by node {ex.path}")
            interrupt = Interrupt(
                id=interrupt_id,
                node_path=ex.path,
                message=message,
                payload=to_json(payload, f"The payload of the interrupt asked by node {ex.path}"),
                response_schema=response_schema,
                human=human,
            )
            ex.add_interrupts([interrupt_id])
            asked = draft("interrupt", ex.path, ex.author, interrupt=interrupt)
            digest = input_digest(ex.given)
            if digest is not None:
                asked["input"] = digest  # what it was asked on (engine.asking)
            drafts.append(asked)
        delta = ex.state.take_delta()
        if drafts:
            if delta:
                drafts[0]["state"] = to_json(delta, f"The state written by node {ex.path}")
            await self.writer.write(*drafts)
        elif delta:
            await self.writer.write(
                draft(
                    "state", ex.path, ex.author, state=to_json(delta, f"The state written by node {ex.path}")
                )
            )

    def _ending(self, ex: Execution) -> tuple[dict[str, Any] | None, Outcome]:
        """The event that ends an execution (if any) and its outcome; raises if unstorable."""
        delta = ex.state.take_delta()
        state = to_json(delta, f"The state written by node {ex.path}") if delta else None
        if ex.interrupts:
            fields: dict[str, Any] = {}
            if ex.route_pending:  # the route chosen before asking holds when the answer comes
                fields["route"] = checked_route(ex.path, ex.route)
            if state:
                fields["state"] = state
            final = draft(_kind_of(fields), ex.path, ex.author, **fields) if fields else None
            return final, Outcome("waiting", interrupts=list(ex.interrupts))
        final = draft("completed", ex.path, ex.author)
        if ex.has_output and not ex.output_persisted:
            final["output"] = _stored_output(ex, ex.output)
            final["output_for"] = ex.targets
        if ex.route_pending:
            final["route"] = checked_route(ex.path, ex.route)
        if state:
            final["state"] = state
        return final, Outcome("completed", ex.output, ex.route)

    async def _record_failure(self, ex: Execution, error: BaseException, node_input: Any) -> None:
        if self.failure_path(error) is not None:
            return  # a child already wrote this error at its own path
        self.failures[id(error)] = (error, ex.path)
        info = ErrorInfo(type=type(error).__name__, message=safe_text(str(error)), traceback=formatted(error))
        fields: dict[str, Any] = {"error": info}
        try:  # the input the attempt failed on, for an operator to edit before retrying
            stored = to_json(node_input, f"The input of node {ex.path}")
        except WorkflowError:
            stored = None  # not JSON (or over the limits): the error is kept without it
        if stored is not None:
            fields["input"] = stored
        await self.writer.write(draft("error", ex.path, ex.author, **fields))

    # -- dynamic children -----------------------------------------------------------

    def run_child(
        self, parent: Execution, node_like: Any, node_input: Any, run_id: Any, use_as_output: bool
    ) -> Coroutine[Any, Any, Any]:
        """Allocate a child's path now and return the coroutine that runs it."""
        if not parent.node.rerun_on_resume:
            raise parent.violate(
                RuleViolation(
                    f"Node {parent.path} calls ctx.run_node() but has rerun_on_resume=False; "
                    "a node that runs children must have rerun_on_resume=True so it can pick up "
                    "their results on resume"
                )
            )
        child = node_like if isinstance(node_like, BaseNode) else as_node(node_like)
        if run_id is None:
            run_id = parent.next_run_id(child.name)
        else:
            run_id = str(run_id)
            if run_id.isdigit() or "/" in run_id or "@" in run_id:
                raise NodeUsageError(
                    f'Explicit run_id "{run_id}" for node "{child.name}" must contain non-numeric '
                    "characters (and no '/' or '@') to prevent collision with auto-generated IDs."
                )
        if use_as_output:
            if parent.delegated:
                raise NodeUsageError(f"Node {parent.path} already has a use_as_output delegate.")
            parent.delegated = True
        parent.allocated += 1
        path = f"{parent.path}/{child.name}@{run_id}"
        targets = [path, *parent.targets] if use_as_output else [path]
        return self._child(parent, child, node_input, path, targets, use_as_output)

    async def _child(
        self,
        parent: Execution,
        child: BaseNode,
        node_input: Any,
        path: str,
        targets: list[str],
        use_as_output: bool,
    ) -> Any:
        parent.begun += 1
        task = asyncio.current_task()
        spawned = task is not parent.task
        if spawned and task is not None:
            parent.add_spawned(task)
        turn = self.turn
        seen = turn.get(path)
        # An outcome for questions asked on another input is not reused (engine.asking).
        if seen is not None and not self._asked_for_other(path, node_input):
            if isinstance(seen, Outcome):
                outcome = seen
            else:  # the same path is running in another task of this turn: wait for it
                if isinstance(seen, _Running):
                    seen = asyncio.get_running_loop().create_future()
                    turn[path] = seen
                outcome = await asyncio.shield(seen)
        elif (replayed := self.replay(child, path, node_input)) is not None:
            outcome = turn[path] = replayed  # fast path: nothing to wait for
        else:
            turn[path] = _RUNNING  # a future only if someone else waits for it
            try:
                outcome = await self.execute(
                    child,
                    node_input,
                    path,
                    targets,
                    # _child_author's choice, without a call on every child's path
                    parent.node.name if parent.node.is_workflow else parent.author,
                    parent.state.schema,
                )
            except BaseException as error:
                waiting = turn[path]
                future = turn[path] = asyncio.get_running_loop().create_future()
                future.set_exception(error)
                future.exception()  # retrieved here; the awaiting caller sees the raise
                if isinstance(waiting, asyncio.Future):
                    waiting.set_exception(error)
                    waiting.exception()
                raise
            waiting = turn[path]
            turn[path] = outcome
            if isinstance(waiting, asyncio.Future):
                waiting.set_result(outcome)
        if outcome.status == "completed":
            if use_as_output:
                parent.deliver(outcome.output, outcome.output_seq)
            return outcome.output
        if outcome.status == "waiting":
            parent.add_interrupts(outcome.interrupts)
            if spawned:
                parent.add_detached(path)
            raise NodeInterruptedError(outcome.interrupts, path)
        failed = outcome.error
        assert failed is not None
        if isinstance(failed, RuleViolation):
            parent.violate(failed)
            raise failed
        if spawned and parent.exited and parent.child_failure is None:
            parent.child_failure = failed
        raise dynamic_node_failed(failed, self.failure_path(failed) or path)
