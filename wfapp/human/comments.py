"""Comments: a person's remark on a run or on one of its questions, an event in the run's log.

A comment is a ``comment`` event (``message`` the text, ``author`` the user, ``interrupt`` the
question it is about, if any), appended like an answer: in order with everything else, shown
in the timeline, in ``manage.py wf show`` and in the exported log, and replay passes over it.
It changes nothing in the run: a waiting run is not woken by it, a running turn folds it in.
Users it mentions as ``@name`` are told (``wfapp.store.hooks.commented``, ``wfapp.notify.triggers``).

Who may comment: whoever may answer the workflow's questions (``wfapp.human.permissions``); a run one
may not view does not exist. Bad input (no text, too long, a question not of this run) raises
``CommentError`` (``ValueLimitError`` for text the log cannot keep) and appends nothing.
"""

from __future__ import annotations

import time
from typing import Any

from asgiref.sync import sync_to_async

from engine import Event
from engine.errors import ConcurrencyError
from engine.events import Interrupt as AskedInterrupt
from engine.limits import check_input
from wfapp.errors import CommentError, RunStateError, UnknownRunError
from wfapp.human.audit import actor_name
from wfapp.human.permissions import can_answer, can_view, require
from wfapp.models import Event as EventRow
from wfapp.models import Interrupt, Session
from wfapp.store import hooks
from wfapp.store.events import DjangoEventStore

MAX_COMMENT = 5000  # characters
_RETRIES = 20


def _target(session_id: str, user: Any, interrupt_pk: int | None) -> tuple[Session, Interrupt | None]:
    session = Session.objects.filter(pk=session_id).first() if "\x00" not in session_id else None
    if session is None or not can_view(user, session.workflow):
        raise UnknownRunError(session_id)
    require(can_answer(user, session.workflow), user, f"comment on runs of {session.workflow!r}")
    question = None
    if interrupt_pk is not None:
        question = Interrupt.objects.filter(pk=interrupt_pk, session_id=session_id).first()
        if question is None:
            raise CommentError(f"Run {session_id!r} has no question {interrupt_pk}", "question")
    return session, question


def clean_text(text: Any) -> str:
    """The comment's text, stripped; ``CommentError`` when empty or too long, ``ValueLimitError``
    when the log cannot keep it."""
    if not isinstance(text, str) or not text.strip():
        raise CommentError("A comment needs some text")
    body = str(text).strip()
    if len(body) > MAX_COMMENT:
        raise CommentError(f"A comment is at most {MAX_COMMENT} characters; this one has {len(body)}")
    check_input(body, "The comment")
    return body


async def add_comment(session_id: str, text: Any, *, user: Any, interrupt_pk: int | None = None) -> int:
    """Append ``user``'s comment to the run (about the question ``interrupt_pk``); its seq."""
    body = clean_text(text)
    session, question = await sync_to_async(_target)(session_id, user, interrupt_pk)
    author = actor_name(user) or ""
    store = DjangoEventStore()
    for _ in range(_RETRIES):
        info = await store.get_session(session_id)
        event = Event(
            seq=info.last_seq + 1,
            session_id=session_id,
            author=author,
            node_path=question.node_path if question else "",
            kind="comment",
            timestamp=time.time(),
            message=body,
            interrupt=AskedInterrupt(id=question.interrupt_id, node_path=question.node_path)
            if question
            else None,
        )
        try:
            await store.append(session_id, [event], expected_seq=info.last_seq)
        except ConcurrencyError:
            continue  # the run moved meanwhile: comment after what it wrote
        await sync_to_async(_keep_settled)(session_id, info.last_seq, event.seq)
        await sync_to_async(hooks.commented.send)(
            sender=None,
            session_id=session_id,
            workflow=session.workflow,
            seq=event.seq,
            author=author,
            text=body,
            interrupt=question.pk if question else None,
        )
        return event.seq
    raise RunStateError(f"Run {session.pk!r} is too busy to take the comment; try again")


def _keep_settled(session_id: str, before: int, seq: int) -> None:
    """A comment on a settled run leaves it settled: nothing for a worker to take up."""
    Session.objects.filter(pk=session_id, settled_seq=before, last_seq=seq).update(settled_seq=seq)


def comments(
    session_id: str,
    *,
    interrupt_id: str | None = None,
    seq: int | None = None,
    after: int = 0,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The run's comments in log order, as plain data (reports, the API); only those about the
    question ``interrupt_id``, or only the one at ``seq``, when given; with ``after`` and
    ``limit``, at most ``limit`` of those with a greater seq (a page)."""
    rows = EventRow.objects.filter(session_id=session_id, kind="comment").order_by("seq")
    if interrupt_id is not None:
        rows = rows.filter(data__interrupt__id=interrupt_id)
    if seq is not None:
        rows = rows.filter(seq=seq)
    if after:
        rows = rows.filter(seq__gt=after)
    if limit is not None:
        rows = rows[:limit]
    return [
        {
            "seq": row.seq,
            "by": row.author,
            "at": row.timestamp,
            "text": row.data.get("message", ""),
            "question": (row.data.get("interrupt") or {}).get("id"),
        }
        for row in rows
    ]
