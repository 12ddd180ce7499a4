"""Turn database rows into what templates show, and render the live fragments sockets send.

Pages and sockets share these builders, so a live update looks exactly like a reload. All
functions here are synchronous (they query); consumers call them through `live.threads.reads`.
Fragments are autoescaped templates; only our own SVG is marked safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from django.db.models import Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from wfapp.human import assignment, permissions
from wfapp.human.permissions import can_answer
from wfapp.models import Event as EventRow
from wfapp.models import Interrupt, InterruptStatus, RunStatus, Session
from wfapp.registry import all_workflows, drawable_workflow
from wfapp.runs import bulk
from wfapp.runs import failures as run_failures
from wfapp.schema_forms.form import SchemaForm
from wfapp.schema_forms.words import humanize
from wfapp.web import counts, queries, run_search
from wfapp.web.failure_cards import FailureCard, failure_cards
from wfapp.web.graph.svg import render_graph
from wfapp.web.human_steps import HumanView
from wfapp.web.readable import Row, answer_summary, pretty, preview, rows
from wfapp.web.run_search import RunSearch
from wfapp.web.run_state import Entry, describe_event, fold_state, node_statuses
from wfapp.web.state_diff import Comparison
from wfapp.web.transcripts import model_steps, transcripts

RUN_GRAPH_ID = "run-graph-svg"
KEY_FIELDS = 3  # payload fields a list view's line shows
# Every way a question closes without an answer.
WITHDRAWN = (InterruptStatus.CANCELLED, InterruptStatus.SUPERSEDED, InterruptStatus.WITHDRAWN)


@dataclass
class AskView:
    """An interrupt as the inbox and the run page show it, with its answer form."""

    row: Interrupt
    form: SchemaForm
    bulk: bool
    payload: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the asking step told the user first
    post_url: str = ""  # where the form posts, when not the dashboard's answer URL (an answer link)
    viewer: Any = None  # the user it is shown to (who holds it reads differently)
    comments: list[Remark] = field(default_factory=list)  # people's comments about the question

    @cached_property
    def page_url(self) -> str:
        return reverse("interrupt", args=[self.row.pk])

    @property
    def dom_id(self) -> str:
        return f"interrupt-{self.row.pk}"

    @property
    def answer_url(self) -> str:
        return self.post_url or reverse("answer", args=[self.row.pk])

    @cached_property
    def run_url(self) -> str:
        return reverse("run", args=[self.row.session_id])

    @property
    def answer_text(self) -> str:
        return answer_summary(self.row.answer)

    @cached_property
    def human(self) -> HumanView:
        """Assignees, holder, due time and quorum (issue 17)."""
        return HumanView(self.row, self.viewer)

    @cached_property
    def key_fields(self) -> list[Row]:
        """The payload's first few one-line fields, for the inbox's list view."""
        return [row for row in self.payload if not row.block and not row.columns][:KEY_FIELDS]

    @cached_property
    def step(self) -> str:
        """The asking step in words: "Manager review" for ``.../manager_review@1``."""
        return step_label(self.row.node_path)

    @cached_property
    def summary(self) -> str:
        """The run's summary ("Ana: 2,300.00 travel"): read with the question by the inbox's
        reads (``queries.with_summary``), else read from the run."""
        return run_summary(self.row)


def step_label(node_path: str) -> str:
    """A node path's last step in words, without its ``@N`` execution count."""
    last = node_path.rstrip("/").rsplit("/", 1)[-1].split("@", 1)[0]
    return humanize(last) if last else ""


def run_summary(row: Interrupt) -> str:
    if Interrupt.session.is_cached(row):
        return row.session.summary or ""
    summary = Session.objects.filter(pk=row.session_id).values_list("summary", flat=True).first()
    return summary or ""


def ask_view(
    row: Interrupt,
    data: Any = None,
    *,
    allow_bulk: bool = True,
    notes: list[str] | None = None,
    viewer: Any = None,
) -> AskView:
    """The view of one interrupt for `viewer`; `allow_bulk` offers the bulk checkbox (the inbox
    has the bulk form)."""
    form = SchemaForm(row.response_schema, data=data, id_prefix=f"i{row.pk}-")
    in_bulk = allow_bulk and bulk.offered(row)
    comments = None
    if notes is None:
        said = messages_before([row])
        notes, comments = said.notes.get(row.pk, []), said.comments.get(row.pk, [])
    return AskView(
        row, form, in_bulk, rows(row.payload, "Details"), notes, viewer=viewer, comments=comments or []
    )


MAX_NOTES = 5  # messages shown with a question: the latest ones


@dataclass(frozen=True)
class Remark:
    """A person's comment about a question, shown on its card."""

    author: str
    text: str


@dataclass
class Said:
    """What the cards' steps said before asking, and what people commented about each question."""

    notes: dict[int, list[str]] = field(default_factory=dict)
    comments: dict[int, list[Remark]] = field(default_factory=dict)


def messages_before(asks: list[Interrupt]) -> Said:
    """Interrupt pk -> the messages its step gave in the execution that asked, and the comments
    about it (one query for both).

    An execution's messages are those at the asking path after its latest ``started`` event
    and before the question; a comment about it is a later ``comment`` event naming it.
    """
    if not asks:
        return Said()
    # Two IN lists rather than an OR per card (Django builds those slowly): the few events of a
    # listed run at another listed card's step are read too, and passed over below.
    found = (
        EventRow.objects.filter(
            session_id__in={ask.session_id for ask in asks}, node_path__in={ask.node_path for ask in asks}
        )
        .filter(Q(kind="started") | Q(data__has_key="message"))
        .order_by("seq")
        .values_list(
            "session_id", "node_path", "seq", "kind", "data__message", "author", "data__interrupt__id"
        )
    )
    by_step: dict[tuple[str, str], list[tuple[int, str, Any, str, Any]]] = {}
    for session_id, node_path, seq, kind, message, author, about in found:
        by_step.setdefault((session_id, node_path), []).append((seq, kind, message, author, about))
    said = Said()
    for ask in asks:
        notes: list[str] = []
        for seq, kind, message, author, about in by_step.get((ask.session_id, ask.node_path), []):
            if kind == "comment":  # people's remarks: the card's comments when about this question
                if seq > ask.request_seq and about == ask.interrupt_id and isinstance(message, str):
                    said.comments.setdefault(ask.pk, []).append(Remark(author or "someone", message))
            elif seq >= ask.request_seq:
                continue
            elif kind == "started":
                notes = []
            elif isinstance(message, str):
                notes.append(message)
        if notes:
            said.notes[ask.pk] = notes[-MAX_NOTES:]
    return said


REJECT_WITH_REASON = "reject-with-reason"


def answer_data(row: Interrupt, posted: Any) -> tuple[Any, str | None]:
    """A posted answer form's data, and the rejection's reason: the one reason field, typed
    next to Approve / Reject (checked by ``answering.answer_interrupt``: it goes with a
    rejection only). ``_outcome=reject-with-reason`` (forms of earlier versions) rejects and
    needs the reason."""
    reason = str(posted.get("_reason", ""))
    if posted.get("_outcome") != REJECT_WITH_REASON:
        return posted, (reason if reason.strip() else None)
    decision = SchemaForm(row.response_schema, id_prefix=f"i{row.pk}-").decision
    data = posted.copy()
    if decision is not None:
        data[decision.name] = "false"
    return data, reason


MAX_HELD = 50  # pending cards of one run a live update re-renders the human steps of


def held_views(rows: Any, viewer: Any) -> list[AskView]:
    """Pending questions whose human steps (holder, quorum, assignees) a live update re-renders
    for ``viewer``: only that part of each card, so a half-typed answer stays as it is."""
    pending = rows.filter(status=InterruptStatus.PENDING).order_by("pk")[:MAX_HELD]
    return [ask_view(row, notes=[], viewer=viewer) for row in pending]


def ask_views(rows: list[Interrupt], *, allow_bulk: bool = True, viewer: Any = None) -> list[AskView]:
    said = messages_before(rows)  # one query for every card
    views = [
        ask_view(row, allow_bulk=allow_bulk, notes=said.notes.get(row.pk, []), viewer=viewer) for row in rows
    ]
    for view in views:
        view.comments = said.comments.get(view.row.pk, [])
    return views


@dataclass
class ClosedView:
    """An interrupt that is no longer pending: who answered what, or why it closed.

    `draft` is what this person had typed and sent too late (a lost race): it stays on the
    card, read-only, under the winner's answer.
    """

    row: Interrupt
    draft: AskView | None = None

    @property
    def dom_id(self) -> str:
        return f"interrupt-{self.row.pk}"

    @property
    def answer_text(self) -> str:
        return answer_summary(self.row.answer)

    @property
    def overrode(self) -> str:
        """Whose claim the answer was given over ("" when none: the holder answered, or nobody held it)."""
        row = self.row
        return (
            row.claimed_by if row.claimed_by and row.answered_by and row.claimed_by != row.answered_by else ""
        )

    @property
    def payload(self) -> list[Row]:
        return rows(self.row.payload, "Details")

    @property
    def step(self) -> str:
        return step_label(self.row.node_path)

    @property
    def reason(self) -> str:
        """Why a question closed without an answer, in words."""
        status = self.row.status
        if status == InterruptStatus.SUPERSEDED:
            return "the question was asked again"
        if status == InterruptStatus.WITHDRAWN:
            return "the step that asked it ended without it"
        if self.row.session.status == RunStatus.CANCELLED:
            return "the run was cancelled"
        return "the run finished without it"


def closed_views(rows: list[Interrupt]) -> list[ClosedView]:
    return [ClosedView(row) for row in rows]


def workflow_names() -> list[str]:
    return list(all_workflows())


# -- run page -------------------------------------------------------------------------------------


def entry(r: dict[str, Any], started_by: str = "") -> Entry:
    """One timeline line; a message a step gave the user (``Event(message=...)``) is shown too."""
    data = r["data"] or {}
    described = describe_event(r["seq"], r["timestamp"], r["kind"], r["node_path"], r["author"], data)
    if started_by and r["seq"] == 1 and r["kind"] == "started":
        described = replace(described, title=f"{described.title} by {started_by}", actor=started_by)
    # These kinds' own words are their message (a question, a comment, a retry's or a cancel's
    # reason), which ``describe_event`` shows already: said once, not again as a step's message.
    message = data.get("message") if r["kind"] not in ("interrupt", "comment", "retry", "status") else None
    if not isinstance(message, str):
        return described
    if r["kind"] == "message":
        return replace(described, title="Message", detail=preview(message, 300), full=_whole(message))
    text = f"{message} · {described.detail}" if described.detail else message
    return replace(described, title=f"Message · {described.title}", detail=preview(text, 300))


def _whole(text: str) -> str:
    return text if len(text) > 300 or "\n" in text else ""


def entries(rows: list[dict[str, Any]], session: Session | None = None) -> list[Entry]:
    """Timeline lines; with the run, its first says who started it."""
    creator = session.created_by if session is not None else None
    started_by = creator.get_username() if creator is not None else ""
    return [entry(r, started_by) for r in rows]


MAX_EXPANDED = 50  # graph nodes a page may ask to list all children of


def expanded_nodes(names: Any) -> frozenset[str]:
    """The graph nodes to show every child of, from a page's request (anything else: none)."""
    if not isinstance(names, list | tuple):
        return frozenset()
    return frozenset(str(n)[:200] for n in names[:MAX_EXPANDED] if isinstance(n, str))


def run_graph(
    session: Session, expanded: frozenset[str] = frozenset(), status: list[tuple[str, str]] | None = None
) -> SafeString:
    """The run's graph with every node's live status (the SVG escapes all text itself)."""
    # The graph of the run's own version; the newest when that one is not registered here.
    workflow = drawable_workflow(session.workflow, session.version)
    if workflow is None:
        return mark_safe("")
    statuses, children = node_statuses(queries.status_rows(session.pk) if status is None else status)
    if statuses:
        statuses.setdefault("START", "completed")  # something ran, so the run got past START
    if session.status == RunStatus.CANCELLED:
        # Nothing runs or waits any more in a cancelled run.
        statuses = {n: "pending" if st in ("running", "waiting") else st for n, st in statuses.items()}
    return mark_safe(
        render_graph(workflow.describe(), statuses, children, id_prefix=RUN_GRAPH_ID, expanded=expanded)
    )


def graph_fragment(user: Any, session_id: str, expanded: frozenset[str]) -> str:
    """The run's graph alone, out of band (a page expanded or collapsed a node's children)."""
    session = queries.get_run(user, session_id)
    if session is None:
        return ""
    context = {"graph": run_graph(session, expanded), "oob": True}
    return render_to_string("wfapp/run.html#graph", context)


def with_canceller(runs: list[Session]) -> list[Session]:
    """Give each run a `cancelled_by` (who cancelled it, "" if nobody did or nobody was named)."""
    cancelled = queries.cancelled_by([r.pk for r in runs if r.status == RunStatus.CANCELLED])
    for run in runs:
        setattr(run, "cancelled_by", cancelled.get(run.pk, ""))  # noqa: B010  # a display attribute
    return runs


def with_actors(runs: list[Session]) -> list[Session]:
    """Runs-list rows: `cancelled_by`, and `answered_by` and `retried_by` (lists of people)."""
    helpers = queries.helpers_of([r.pk for r in runs])
    for run in with_canceller(runs):
        acted = helpers.get(run.pk, {})
        setattr(run, "answered_by", acted.get("answered", []))  # noqa: B010
        setattr(run, "retried_by", acted.get("retried", []))  # noqa: B010
    return runs


def cancelled_by(session: Session) -> dict[str, str]:
    """Who cancelled the run and why, from its last status event (nothing unless cancelled)."""
    if session.status != RunStatus.CANCELLED:
        return {}
    row = (
        EventRow.objects.filter(session_id=session.pk, kind="status")
        .order_by("-seq")
        .values("author", "data__message")
        .first()
    )
    if row is None:
        return {}
    reason = row["data__message"]
    return {"by": row["author"] or "", "reason": reason if isinstance(reason, str) else ""}


def result_context(
    session: Session, user: Any, edited: list[run_failures.EditedInput] | None = None
) -> dict[str, Any]:
    """The run's status-dependent parts: actions (those `user` may take), state, output, input,
    and the inputs people edited in retries (``edited``: known already; None: read them)."""
    with_canceller([session])
    state = fold_state(queries.state_deltas(session.pk))
    return {
        "edited_inputs": run_failures.edited_inputs(session.pk) if edited is None else edited,
        "cancelled": cancelled_by(session),
        "run": session,
        "state": state,
        "state_text": pretty(state),
        "output_text": pretty(session.output),
        "output_rows": rows(session.output, "Result"),
        "input_text": pretty(session.input),
        "can_cancel": session.status in (RunStatus.RUNNING, RunStatus.WAITING, RunStatus.FAILED)
        and permissions.can_cancel(user, session),
        "can_retry": session.status == RunStatus.FAILED and permissions.can_retry(user, session),
    }


def run_context(
    session: Session,
    user: Any,
    expanded: frozenset[str] = frozenset(),
    compare: Comparison | None = None,
    failures: list[FailureCard] | None = None,
    latest: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the run page shows; a fixed number of queries whatever the log's length.

    ``latest``: the latest events, read *before* ``session`` (a row read after the events is at
    least as new as they are, so a page never shows a run's last events under a head that still
    says "running" while its socket, starting after them, has nothing left to send)."""
    if latest is None:
        latest = queries.events_before(session.pk, None)
    older = latest[0]["seq"] if latest and latest[0]["seq"] > 1 else None
    last_seq = latest[-1]["seq"] if latest else 0
    status = queries.status_rows(session.pk)  # read once: the graph and the transcripts use it
    never_failed = not any(kind == "error" for kind, _ in status)  # then no retry edited an input
    return {
        **result_context(session, user, [] if never_failed else None),
        "graph": run_graph(session, expanded, status),
        "asks": ask_views(queries.pending_for_run(user, session.pk, last_seq), allow_bulk=False, viewer=user),
        "entries": entries(latest, session),
        "older_before": older,
        "last_seq": last_seq,
        "transcripts": transcripts(session.pk, status),
        "failures": _failures(session, status, user) if failures is None else failures,
        "show_tracebacks": permissions.can_retry(user, session),
        "compare": compare or Comparison(),
    }


def _failures(session: Session, status: list[tuple[str, str]], viewer: Any) -> list[FailureCard]:
    """The failure cards; no query for a run none of whose nodes ever failed (``status`` says)."""
    return failure_cards(session, viewer=viewer) if any(kind == "error" for kind, _ in status) else []


# -- live fragments -------------------------------------------------------------------------------


def badge_fragment(user: Any, doorbell: counts.Doorbell | None = None) -> str:
    """The navigation's pending count; with a doorbell, counted once for every page that heard it."""
    count = counts.pending_count(user, doorbell)
    if doorbell is None:
        return render_to_string("wfapp/live.html#badge", {"pending_count": count})
    # The same number reads the same for everyone: rendered once per count, not per page.
    return counts.shared_text(
        ("badge", count), lambda: render_to_string("wfapp/live.html#badge", {"pending_count": count})
    )


def known_badge(user: Any, doorbell: counts.Doorbell) -> str | None:
    """``badge_fragment`` for a doorbell when another page had it rendered already (None: not
    yet); no query, so a socket's event loop may ask before it hands the work to a thread."""
    count = counts.known_pending_count(user, doorbell)
    return None if count is None else counts.known_text(("badge", count))


@dataclass
class RunUpdate:
    """What a run page receives, where it now is, and which question cards opened or closed."""

    html: str
    last_seq: int
    opened: set[int] = field(default_factory=set)
    closed: set[int] = field(default_factory=set)
    streaming: set[str] | None = None  # model steps given a live line (when the transcripts were rendered)
    finished: set[str] = field(default_factory=set)  # model steps recorded in this update


def run_update(
    session_id: str,
    user: Any,
    after: int,
    showing: set[int] | None = None,
    expanded: frozenset[str] = frozenset(),
    limit: int | None = None,
    live: Mapping[str, str] | None = None,
) -> RunUpdate:
    """Fragments bringing a run page from seq `after` to now (at most `limit` events).

    `showing` are the question cards the page shows as open: any of them no longer pending
    closes, whatever closed it (an answer, a cancellation, a withdrawal, a question asked again).
    `live` is the text models streamed to this page so far, by model step (`live.model_text`).
    """
    # Events first, the run's row after them: a row read later is at least as new as the last
    # event read, so a batch ending the run never renders a head that still says "running".
    rows = (
        queries.events_after(session_id, after)
        if limit is None
        else queries.events_after(session_id, after, limit)
    )
    if not rows:
        return RunUpdate("", after)
    session = queries.get_run(user, session_id)
    if session is None:
        return RunUpdate("", after)
    last = rows[-1]["seq"]
    kinds = {r["kind"] for r in rows}
    context: dict[str, Any] = {"run": session, "entries": entries(rows, session), "last_seq": last}
    status: list[tuple[str, str]] | None = None
    if kinds & {"started", "completed", "interrupt", "error", "status"}:
        status = queries.status_rows(session.pk)
        context["graph"] = run_graph(session, expanded, status)
    update = RunUpdate("", last)
    visible = queries.answerable(user).filter(session_id=session_id).select_related("session")
    if "interrupt" in kinds:
        asked = [r["seq"] for r in rows if r["kind"] == "interrupt"]
        fresh = list(visible.filter(request_seq__in=asked, status=InterruptStatus.PENDING))
        context["new_asks"] = ask_views(fresh, allow_bulk=False, viewer=user)
        update.opened = {row.pk for row in fresh}
    # Answers in this batch close their cards; so does anything the page shows that stopped pending.
    closing = Q(status=InterruptStatus.ANSWERED, answer_seq__gt=after, answer_seq__lte=last)
    if showing:
        closing |= Q(pk__in=showing) & ~Q(status=InterruptStatus.PENDING)
    if "answer" in kinds or showing:
        closed = list(visible.filter(closing).exclude(pk__in=update.opened))
        context["closed_asks"] = closed_views(closed)
        update.closed = {row.pk for row in closed}
    still_open = (showing or set()) - update.closed
    if kinds & {"assignment", "answer"} and still_open:
        # A claim, a release, a reassignment or a quorum's approval by anyone: who holds what.
        context["held_asks"] = held_views(visible.filter(pk__in=still_open), user)
    if kinds & {"started", "completed", "interrupt", "answer", "error"}:
        # The agents' conversations, when they moved (no query for a run without agents).
        shown = transcripts(session_id, status, live)
        context["transcripts"] = shown
        context["transcripts_changed"] = True
        update.streaming = {t.thinking for t in shown if t.thinking}
        update.finished = model_steps([r["node_path"] for r in rows if r["kind"] in ("completed", "error")])
    if kinds & {"status", "state", "output", "completed", "retry"}:
        context.update(result_context(session, user))
        context["result_changed"] = True
    if kinds & {"status", "error", "retry"}:
        context["failures"] = _failures(session, status or queries.status_rows(session.pk), user)
        context["failures_changed"] = True
        context["show_tracebacks"] = permissions.can_retry(user, session)
    update.html = render_to_string("wfapp/live.html#run_update", context)
    return update


def transcripts_fragment(session_id: str, live: Mapping[str, str]) -> tuple[str, set[str]]:
    """The run's transcripts with the text streamed so far, and the model steps given a live line."""
    shown = transcripts(session_id, None, live)
    html = render_to_string("wfapp/transcript.html#list", {"transcripts": shown, "oob": True})
    return html, {t.thinking for t in shown if t.thinking}


def _matching(rows: Any, filters: dict[str, Any]) -> Any:
    """``rows`` narrowed to the inbox page's workflow and message search."""
    if filters.get("workflow"):
        rows = rows.filter(workflow=filters["workflow"])
    if filters.get("q"):
        rows = rows.filter(message__icontains=filters["q"])
    return rows


@dataclass(frozen=True)
class InboxUpdate:
    """An inbox update as rendered for ``viewer`` (a user's pk): its HTML, the new questions it
    brings, and whether it is ``personal``: some of it reads differently for another viewer
    with the same rights (a card's holder, its refusal, a tab of the viewer's own)."""

    html: str
    sent: frozenset[int]
    viewer: Any
    personal: bool


def inbox_update(
    user: Any,
    filters: dict[str, Any],
    watermark: int,
    sent: set[int],
    *,
    session_id: str | None = None,
    answered_after: int = 0,
    closed_since: Any = None,
    doorbell: counts.Doorbell | None = None,
) -> tuple[str, set[int]]:
    """``inbox_update_for``'s HTML and new questions."""
    update = inbox_update_for(
        user,
        filters,
        watermark,
        sent,
        session_id=session_id,
        answered_after=answered_after,
        closed_since=closed_since,
        doorbell=doorbell,
    )
    return update.html, set(update.sent)


def inbox_update_for(
    user: Any,
    filters: dict[str, Any],
    watermark: int,
    sent: set[int],
    *,
    session_id: str | None = None,
    answered_after: int = 0,
    closed_since: Any = None,
    doorbell: counts.Doorbell | None = None,
) -> InboxUpdate:
    """Fragments bringing an inbox up to date: new items appear, answered ones close, and the
    run's pending ones show who holds them and who approved them now.

    New means pending, newer than what the page was rendered with (`watermark`, the highest
    interrupt id then) and not sent yet. A doorbell narrows the search to its run and closes
    what was answered after seq `answered_after` (and what the run withdrew); a first
    connection catches up on answers given since the page was rendered (`closed_since`).
    """
    visible = queries.answerable(user)
    if session_id is not None:
        visible = visible.filter(session_id=session_id)
    fresh = _matching(visible.filter(status=InterruptStatus.PENDING, pk__gt=watermark), filters)
    fresh = queries.with_summary(fresh)
    fresh = fresh.exclude(pk__in=sent)
    tab = filters.get("tab", "all")
    fresh = assignment.for_tab(fresh, user, tab)
    visible = visible.select_related("session")
    closing = Q(status=InterruptStatus.ANSWERED, answer_seq__gt=answered_after)
    if closed_since is not None:
        closing &= Q(answered_at__gte=closed_since)
    if session_id is not None:
        closing |= Q(status__in=WITHDRAWN)
    new_rows = list(fresh.order_by("created_at", "id")[: queries.INBOX_PAGE])
    held: list[AskView] = []
    if session_id is not None:
        # A doorbell for one run: its cards the page shows may have a new holder or approval.
        shown = (Q(pk__lte=watermark) | Q(pk__in=sent)) & ~Q(pk__in={r.pk for r in new_rows})
        held = held_views(_matching(visible.filter(shown), filters), user)
    new_asks = ask_views(new_rows, viewer=user)
    context = {
        "new_asks": new_asks,
        "held_asks": held,
        "closed_asks": closed_views(list(visible.filter(closing).order_by("-pk")[:50])),
        "newest": bool(filters.get("newest")),
        "pending_count": counts.pending_count(user, doorbell),
        "filters": filters,
        "page": {
            "count": counts.pending_matching_count(
                user, filters.get("workflow", ""), filters.get("q", ""), doorbell
            )
            if tab == "all"
            else queries.pending_matching_count(  # a tab's count is the user's own
                user, workflow=filters.get("workflow", ""), q=filters.get("q", ""), tab=tab
            )
        },
    }
    personal = tab != "all" or any(view.human.personal for view in [*new_asks, *held])
    return InboxUpdate(
        render_to_string("wfapp/live.html#inbox_update", context),
        frozenset(row.pk for row in new_rows),
        user.pk,
        personal,
    )


def inbox_list(user: Any, filters: dict[str, Any], watermark: int, *, view: str = "cards") -> str:
    """The whole inbox list again (after a reconnect), out of band, in the page's view."""
    page = queries.inbox_page(user, up_to=watermark, **filters)
    context = {
        "asks": ask_views(page.items, viewer=user),
        "page": page,
        "filters": filters,
        "oob": True,
        "can_answer": can_answer(user),
        "view": view,
    }
    return render_to_string("wfapp/inbox.html#list", context) + badge_fragment(user)


def question_update(user: Any, pk: int) -> tuple[str, bool]:
    """A question's own page, out of band: its closed card once it is no longer pending (and
    True), else its human steps as they are now for ``user`` (and False)."""
    row = queries.visible_interrupt(user, pk)
    if row is None:
        return "", False
    if row.status == InterruptStatus.PENDING:
        context = {"ask": ask_view(row, notes=[], viewer=user), "reassign": permissions.can_reassign(user)}
        return render_to_string("wfapp/inbox.html#human_oob", context), False
    return render_to_string("wfapp/inbox.html#closed", {"closed": ClosedView(row), "oob": True}), True


def runs_update(
    user: Any, session_id: str, search: RunSearch | None, since: datetime | None
) -> tuple[str, bool]:
    """A runs-list row, and whether it is new there: a run created at or after `since` that
    `search` takes is prepended (None for either: only rows the page shows are updated)."""
    session = queries.get_run(user, session_id)
    if session is None:
        return "", False
    insert = (
        since is not None
        and search is not None
        and session.created_at >= since
        and run_search.matches(session, search)
    )
    with_actors([session])
    return render_to_string("wfapp/live.html#run_row", {"run": session, "insert": insert}), insert
