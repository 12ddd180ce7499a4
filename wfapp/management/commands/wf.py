"""``manage.py wf``: list workflows, start, show, answer, cancel and retry runs; JSON on stdout.

``wf token create <user>`` prints a new personal API token (only then: just a hash is kept),
``wf token revoke <user> <id>`` revokes one.

``start``, ``answer`` and ``retry`` execute the run in this process under a lease (a running
server leaves it alone) and return once it waits or ends. With ``WFAPP_RUNTIME=workers`` they
hand the run to the worker processes instead and wait for them (``--no-wait``: return at
once). ``worker`` runs a worker process, ``workers`` shows which worker holds which run,
``health`` checks what a probe needs. ``replay-check`` replays the logs of open runs on the
registered code (executing nothing) and exits non-zero when one would not resume; ``export``
writes a run's log as JSON for ``engine.replay_check``. Bad input exits non-zero with a message
on stderr and writes nothing; so does a database that is not migrated yet.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from engine import limits
from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    InterruptAlreadyAnswered,
    UnknownInterruptError,
    UnreadableLogError,
    ValueLimitError,
)
from wfapp.errors import BadRequest, PayloadTooLargeError, UnknownWorkflowError
from wfapp.human import audit, comments
from wfapp.models import AttemptOutcome, Interrupt
from wfapp.registry import all_versions, all_workflows
from wfapp.runs import answering, interventions, starting, versions
from wfapp.runs.checks import migration_problem
from wfapp.runs.inputs import parse_json
from wfapp.runs.mode import WorkersMisconfigured, check_workers_config, workers_mode
from wfapp.runs.reports import interrupt_report, run_report
from wfapp.runs.runtime import Runtime
from wfapp.store.events import close_connections
from wfapp.store.rows import pending_row
from wfapp.worker import health, process, wait


class Command(BaseCommand):
    help = "Workflows from the command line (JSON output, for scripting)."

    def add_arguments(self, parser: Any) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        actions.add_parser("list", help="list the registered workflows")
        start = actions.add_parser("start", help="start a run; returns once it waits or ends")
        start.add_argument("workflow")
        start.add_argument("--input", default="null", help="the workflow input, as JSON")
        start.add_argument("--user", help="who starts it, recorded as its creator (needs wfapp.start_run)")
        show = actions.add_parser("show", help="show a run: status, output or error, pending interrupts")
        show.add_argument("run")
        show.add_argument("--events", action="store_true", help="include the whole event log")
        show.add_argument("--user", help="as whom (a run of a workflow they may not view is unknown)")
        answer = actions.add_parser("answer", help="answer an interrupt, then continue the run")
        answer.add_argument("run")
        answer.add_argument("interrupt_id")
        answer.add_argument("--answer", required=True, help="the answer, as JSON")
        answer.add_argument("--user", required=True, help="who answers (needs wfapp.answer_interrupt)")
        answer.add_argument("--reason", help="reject an approve/reject question with this reason")
        answer.add_argument(
            "--asking",
            type=int,
            metavar="SEQ",
            help="answer only this asking of the interrupt (its request_seq, as `wf show` lists it); "
            "refused once it no longer waits, even when the interrupt id is asked again",
        )
        answer.add_argument("--digest", help="with --asking: the digest of the question as it was shown")
        answer.add_argument(
            "--override-claim",
            action="store_true",
            help="answer over another user's claim (superusers and holders of wfapp.reassign_interrupt)",
        )
        comment = actions.add_parser("comment", help="comment on a run or one of its questions")
        comment.add_argument("run")
        comment.add_argument("--text", required=True, help="the comment")
        comment.add_argument(
            "--user", required=True, help="who comments (may answer the workflow's questions)"
        )
        comment.add_argument("--question", type=int, help="the question's id (as `wf show` lists it)")
        for name, text in (("cancel", "cancel a run"), ("retry", "retry a failed run")):
            sub = actions.add_parser(name, help=text)
            sub.add_argument("run")
            sub.add_argument("--user", help=f"who does it (needs wfapp.{name}_run)")
        actions.choices["cancel"].add_argument("--reason", default="", help="why, kept in the log")
        retry = actions.choices["retry"]
        retry.add_argument("--node", help="the failed node to retry (its path)")
        retry.add_argument("--input", help="with --node: that node's input from now on, as JSON")
        retry.add_argument("--reason", default="", help="why, kept in the log beside the retry")
        token = actions.add_parser("token", help="personal API tokens")
        token_actions = token.add_subparsers(dest="token_action", required=True, metavar="TOKEN_ACTION")
        create = token_actions.add_parser("create", help="create a token; prints it (only this once)")
        create.add_argument("user")
        create.add_argument("--name", default="command line", help="what the token is for")
        create.add_argument("--days", type=int, help="days until it expires (default WFAPP_API_TOKEN_DAYS)")
        create.add_argument("--never-expires", action="store_true", help="a token that never expires")
        create.add_argument("--read-only", action="store_true", help="the token may read but change nothing")
        create.add_argument(
            "--workflow", action="append", default=[], help="limit it to this workflow (repeatable)"
        )
        revoke = token_actions.add_parser("revoke", help="revoke a token by its id")
        revoke.add_argument("user")
        revoke.add_argument("token_id", type=int)
        for sub in (start, answer, actions.choices["retry"]):
            sub.add_argument(
                "--no-wait", action="store_true", help="workers mode: return once the run is queued"
            )
            sub.add_argument(
                "--timeout",
                type=float,
                default=600.0,
                help="workers mode: give up waiting after this many seconds",
            )
        worker = actions.add_parser("worker", help="run a worker process (WFAPP_RUNTIME=workers, PostgreSQL)")
        worker.add_argument("--concurrency", type=int, default=10, help="runs advanced at once (default 10)")
        worker.add_argument("--queues", nargs="+", metavar="QUEUE", help="only these queues (default: all)")
        actions.add_parser("workers", help="which worker holds which run; the queue's workers and their jobs")
        probe = actions.add_parser(
            "health", help="check database, migrations, workers; non-zero when unhealthy"
        )
        probe.add_argument("--require-workers", action="store_true", help="no live worker is unhealthy")
        check = actions.add_parser(
            "replay-check", help="replay open runs on the registered code; exit 1 if one would not resume"
        )
        check.add_argument("--workflow", help="only the runs of this workflow")
        check.add_argument("--all", action="store_true", help="also check a sample of finished runs")
        check.add_argument("--sample", type=int, default=50, help="how many finished runs --all checks")
        export = actions.add_parser("export", help="write a run's log as JSON (a recorded log for tests)")
        export.add_argument("run")
        export.add_argument("--output", "-o", help="the file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        self.failure: str | None = None  # set by an action whose report means a non-zero exit
        if options["action"] == "token":
            self._token(options)  # the token itself on stdout, not JSON: it is what you copy
            return
        try:
            if options["action"] == "worker":
                self._worker(options)
                return
            if options.get("no_wait") and not workers_mode():
                raise CommandError(
                    "--no-wait needs WFAPP_RUNTIME=workers (embedded, the CLI executes the run itself)"
                )
            _check_arguments(options)
            report = asyncio.run(self._dispatch(options))
        except (ValueError, UnreadableLogError, WorkersMisconfigured, wait.NotAdvancedError) as error:
            raise CommandError(limits.safe_text(str(error))) from None  # a caller error: nothing was written
        except DatabaseError:
            problem = migration_problem()  # no wfapp tables yet: say what to run, not a traceback
            if problem is None:
                raise
            raise CommandError(problem) from None
        self.stdout.write(json.dumps(report, indent=2, default=str))
        if self.failure:
            raise CommandError(self.failure)
        if options["action"] == "health" and not report["healthy"]:
            sys.exit(1)

    def _worker(self, options: dict[str, Any]) -> None:
        if options["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")

        def announce(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        status = process.run(concurrency=options["concurrency"], queues=options["queues"], announce=announce)
        if status:
            sys.exit(status)

    async def _dispatch(self, options: dict[str, Any]) -> Any:
        try:
            return await getattr(self, "_" + options["action"].replace("-", "_"))(options)
        finally:
            await close_connections()

    async def _list(self, options: dict[str, Any]) -> Any:
        return [
            {
                "name": name,
                "description": wf.describe().get("description", ""),
                "input_schema": wf.input_json_schema,
                "version": wf.version,
                "versions": list(all_versions()[name]),
            }
            for name, wf in all_workflows().items()
        ]

    async def _start(self, options: dict[str, Any]) -> Any:
        node_input = parse_json(options["input"], "--input")
        user = await _user(options.get("user"))
        if workers_mode():
            await sync_to_async(check_workers_config)(needs_workers_mode=False)
            session_id = await starting.start_run(options["workflow"], node_input, user=user)
            await _wait(options, session_id, 0)
            return await sync_to_async(run_report)(session_id)
        engine = Runtime(sweep=False)
        session_id, lease = await starting.create_run(
            options["workflow"], node_input, user=user, owner=engine.owner
        )
        assert lease is not None
        await _drive(engine, lease)
        return await sync_to_async(run_report)(session_id)

    async def _show(self, options: dict[str, Any]) -> Any:
        user = await _user(options.get("user"))
        return await sync_to_async(run_report)(options["run"], events=options["events"], user=user)

    async def _answer(self, options: dict[str, Any]) -> Any:
        user = await _user(options["user"])
        value = await _answer_value(options, user)
        scaled = workers_mode()
        if scaled:
            await sync_to_async(check_workers_config)(needs_workers_mode=False)
        before = await sync_to_async(wait.settled_seq)(options["run"]) if scaled else 0
        row = await sync_to_async(_asking_row)(options)
        try:
            await answering.answer_interrupt(
                options["run"],
                options["interrupt_id"],
                value,
                user=user,
                advance=scaled,
                reason=options.get("reason"),
                asking=audit.asking_of(row, options.get("digest")) if row is not None else None,
                override_claim=bool(options.get("override_claim")),
            )
        except (AskingClosedError, AskingChangedError):
            assert row is not None
            await row.arefresh_from_db()
            reason = await sync_to_async(audit.stale_reason)(row)
            raise CommandError(
                f"Interrupt {options['interrupt_id']!r} asked at seq {row.request_seq}: {reason} "
                "This answer was not recorded"
            ) from None
        except InterruptAlreadyAnswered as refused:
            when = refused.answered_at
            at = f" at {when:%Y-%m-%d %H:%M:%S} UTC" if hasattr(when, "strftime") else ""
            who = refused.answered_by or "someone else"
            asked = f" asked at seq {row.request_seq}" if row is not None else ""
            raise CommandError(
                f"Interrupt {options['interrupt_id']!r}{asked} was already answered by {who}{at}; "
                "this answer was not recorded"
            ) from None
        except UnknownWorkflowError as gone:
            raise CommandError(
                f"Run {options['run']!r} belongs to the workflow {gone.name!r}, which is no longer "
                "registered (WFAPP_WORKFLOWS); the answer was not recorded"
            ) from None
        except UnknownInterruptError as error:
            pending = [ask["id"] for ask in (await sync_to_async(run_report)(options["run"]))["pending"]]
            waits = f"it waits for: {', '.join(pending)}" if pending else "it waits for no answer"
            raise CommandError(f"{error}; {waits}") from None
        if scaled:
            await _wait(options, options["run"], before)
        else:
            await _advance_here(options["run"])
        report = await sync_to_async(run_report)(options["run"])
        if row is not None:  # which asking the answer went to (a loop may ask the id again)
            await row.arefresh_from_db()
            report["answered_asking"] = interrupt_report(row)
        return report

    async def _comment(self, options: dict[str, Any]) -> Any:
        user = await _user(options["user"])
        await comments.add_comment(
            options["run"], options["text"], user=user, interrupt_pk=options.get("question")
        )
        return await sync_to_async(run_report)(options["run"], user=user)

    async def _cancel(self, options: dict[str, Any]) -> Any:
        user = await _user(options.get("user"))
        await interventions.cancel_run(options["run"], user=user, reason=options.get("reason") or "")
        return await sync_to_async(run_report)(options["run"])

    async def _retry(self, options: dict[str, Any]) -> Any:
        edit: dict[str, Any] = {"node": options.get("node"), "reason": options.get("reason") or ""}
        if options.get("input") is not None:
            edit.update(node_input=parse_json(options["input"], "--input"), edited=True)
        if workers_mode():
            await sync_to_async(check_workers_config)(needs_workers_mode=False)
            before = await sync_to_async(wait.settled_seq)(options["run"])
            user = await _user(options.get("user"))
            await interventions.retry_run(options["run"], user=user, **edit)
            await _wait(options, options["run"], before)
            return await sync_to_async(run_report)(options["run"])
        user = await _user(options.get("user"))
        await interventions.record_retry(options["run"], user=user, **edit)
        await _advance_here(options["run"], retry=True)
        return await sync_to_async(run_report)(options["run"])

    def _token(self, options: dict[str, Any]) -> None:
        from wfapp.api import tokens

        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"Unknown user {options['user']!r}")
        if options["token_action"] == "revoke":
            if not tokens.revoke(user, options["token_id"]):
                raise CommandError(f"{user} has no active token {options['token_id']}")
            self.stderr.write(f"Token {options['token_id']} of {user} revoked.")
            return
        try:
            days = (
                None
                if options["never_expires"]
                else (tokens.DEFAULT if options["days"] is None else options["days"])
            )
            record, text = tokens.issue(
                user,
                options["name"],
                days=days,
                read_only=options["read_only"],
                workflows=options["workflow"],
            )
        except ValueError as refused:
            raise CommandError(str(refused)) from None
        self.stderr.write(
            f"{tokens.describe(record).capitalize()}, id {record.pk} ({record.name!r}); it is shown only this once:"
        )
        self.stdout.write(text)

    async def _workers(self, options: dict[str, Any]) -> Any:
        return await sync_to_async(health.workers_report)()

    async def _health(self, options: dict[str, Any]) -> Any:
        return await sync_to_async(health.health_report)(require_workers=options["require_workers"])

    async def _replay_check(self, options: dict[str, Any]) -> Any:
        workflow = options.get("workflow")
        if workflow and workflow not in all_versions():
            raise UnknownWorkflowError(workflow, sorted(all_versions()))
        if options["sample"] < 0:
            raise CommandError("--sample must be 0 or more")
        finished = options["sample"] if options["all"] else 0
        checks = await sync_to_async(versions.check_runs)(workflow, finished=finished)
        failing = [check for check in checks if not check.ok]
        if failing:
            self.failure = (
                f"{len(failing)} of {len(checks)} runs would not resume on this code: "
                + "; ".join(f"{check.run}: {check.detail}" for check in failing[:5])
            )
        return {
            "checked": len(checks),
            "replays": len(checks) - len(failing),
            "failing": len(failing),
            "runs": [check.as_dict() for check in checks],
        }

    async def _export(self, options: dict[str, Any]) -> Any:
        recorded = await sync_to_async(versions.export_run)(options["run"])
        if not options.get("output"):
            return recorded
        path = Path(options["output"])
        try:
            path.write_text(json.dumps(recorded, indent=1) + "\n")
        except OSError as error:
            raise CommandError(f"Cannot write {path}: {error.strerror}") from None
        return {"run": recorded["session_id"], "written": str(path), "events": len(recorded["events"])}


async def _answer_value(options: dict[str, Any], user: Any) -> Any:
    """The ``--answer`` JSON; refused text on a known question is audited like any answer."""
    raw = options["answer"]
    try:
        return parse_json(raw, "--answer")
    except (BadRequest, ValueLimitError) as error:
        too_large = isinstance(error, PayloadTooLargeError)
        # What the log cannot keep is kept as text, escaped (a NUL, an unpaired surrogate).
        kept = None if too_large else limits.safe_text(raw)
        outcome = AttemptOutcome.TOO_LARGE if too_large else AttemptOutcome.INVALID
        record = sync_to_async(audit.record)
        await record(options["run"], options["interrupt_id"], user, kept, outcome, str(error))
        raise


def _check_arguments(options: dict[str, Any]) -> None:
    """Refuse an id or name no database can look up: a NUL, or bytes that are not UTF-8."""
    for name, value in options.items():
        if isinstance(value, str) and name not in ("input", "answer"):  # those are checked as JSON
            limits.check_input(value, f"--{name}" if name in ("user",) else f"The {name.replace('_', ' ')}")


async def _user(username: str | None) -> Any:
    if not username:
        return None
    users = get_user_model()
    user = await users.objects.filter(username=username).afirst()
    if user is None:
        raise CommandError(f"Unknown user {username!r}")
    return user


async def _wait(options: dict[str, Any], session_id: str, before: int) -> None:
    """Workers mode: wait until a worker settled the run (unless ``--no-wait``)."""
    if not options["no_wait"]:
        await wait.until_settled(session_id, before, options["timeout"])


async def _drive(engine: Runtime, lease: Any, *, retry: bool = False) -> None:
    await engine.start()
    try:
        await engine.drive(lease, retry=retry)
    finally:
        await engine.stop()


async def _advance_here(session_id: str, *, retry: bool = False) -> None:
    """Execute the run here under a lease; if a server holds it, it is the server's to finish."""
    from wfapp.store import lease as leases

    engine = Runtime(sweep=False)
    lease = await sync_to_async(leases.claim)(session_id, engine.owner, engine.ttl)
    if lease is not None:
        await _drive(engine, lease, retry=retry)


def _asking_row(options: dict[str, Any]) -> Interrupt | None:
    """The asking ``wf answer`` answers: ``--asking`` (any status: a closed one is refused with
    why), else the one pending now; None when there is none (the answer is refused as unknown)."""
    run, interrupt_id, seq = options["run"], options["interrupt_id"], options.get("asking")
    if seq is None:
        if options.get("digest"):
            raise CommandError("--digest goes with --asking: name the asking it was shown for")
        return pending_row(run, interrupt_id)
    row = Interrupt.objects.filter(session_id=run, interrupt_id=interrupt_id, request_seq=seq).first()
    if row is None:
        raise CommandError(f"Run {run!r} never asked {interrupt_id!r} at seq {seq}; nothing was recorded")
    return row
