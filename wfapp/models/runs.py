"""The database schema: sessions (runs), their event logs, the inbox projection, answer attempts.

The event log is the source of truth; ``Session`` columns other than the lease and
``last_seq`` and the ``Interrupt`` rows are projections the store keeps in the same
transaction as the events they summarise.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q, TextField, Value
from django.db.models.functions import Cast, Concat, Lower


class RunStatus(models.TextChoices):
    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Session(models.Model):
    """One run of a workflow, with the lease of the worker executing it."""

    id = models.CharField(primary_key=True, max_length=64)
    workflow = models.CharField(max_length=200, db_index=True)
    # The workflow version the run started on and resumes on ("" for runs recorded before versions).
    version = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING)
    input = models.JSONField(null=True)
    output = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)  # {"type": ..., "message": ...}
    # What the run is about, in words, made from its input when it starts (wfapp.run_labels).
    summary = models.CharField(max_length=200, blank=True, default="")
    # The runs list's text search reads this, kept by the database whenever input or output
    # change, and indexed by wfapp.store.search_index (a trigram GIN on PostgreSQL, FTS5 on SQLite).
    # Generated on SQLite; on PostgreSQL a trigger fills it (migration 0014), so an append's
    # update of the row does not compute it again. Django never writes it either way.
    search_text = models.GeneratedField(
        expression=Lower(
            Concat(
                Cast("input", TextField()), Value("\n", output_field=TextField()), Cast("output", TextField())
            )
        ),
        output_field=TextField(),
        db_persist=True,
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The lease: who may append, fenced by the epoch that each claim increments.
    lease_owner = models.CharField(max_length=200, null=True, blank=True)
    lease_epoch = models.BigIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_seq = models.BigIntegerField(default=0)
    # The seq of the last status event that ended a turn: later events (answers) need an advance.
    settled_seq = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "run"  # what the dashboard calls it (the engine's session)
        ordering = ["-created_at"]
        # Checked by wfapp.human.permissions (answering is Interrupt's answer_interrupt).
        permissions = [
            ("start_run", "Can start runs"),
            ("cancel_run", "Can cancel runs"),
            ("retry_run", "Can retry failed runs"),
            # On top of retry_run: a failed node's input replaced (never for the run's requester).
            ("retry_with_edited_input", "Can retry a failed node with an edited input"),
        ]
        indexes = [
            models.Index(fields=["status", "-updated_at"], name="wfapp_session_status"),
            models.Index(fields=["-created_at"], name="wfapp_session_created"),
            models.Index(fields=["updated_at"], name="wfapp_session_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.workflow} {self.id}"


class Event(models.Model):
    """One entry of a session's append-only log; ``data`` holds the kind's payload."""

    # The (session, seq) unique index serves lookups by session: no separate index.
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=16)
    node_path = models.CharField(max_length=1000, blank=True)
    author = models.CharField(max_length=200, blank=True)  # the workflow, or the answering actor
    invocation_id = models.CharField(max_length=64, blank=True)
    timestamp = models.FloatField()
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="wfapp_event_session_seq")]
        # The runs list's "answered by, retried by": a page of runs' people without reading their
        # logs (its condition is spelled out again in wfapp.web.queries.helpers_of).
        indexes = [
            models.Index(
                fields=["session", "seq"],
                condition=Q(kind__in=["answer", "retry"]),
                name="wfapp_event_people",
            )
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.kind} {self.node_path}"


class InterruptStatus(models.TextChoices):
    PENDING = "pending"
    ANSWERED = "answered"
    CANCELLED = "cancelled"  # the run was cancelled or completed while it waited
    SUPERSEDED = "superseded"  # asked again with the same id before it was answered
    WITHDRAWN = "withdrawn"  # the execution that asked it failed or finished without it


class Interrupt(models.Model):
    """The inbox: one row per interrupt request, keyed by session, interrupt id and request seq."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="interrupts")
    interrupt_id = models.CharField(max_length=200)
    request_seq = models.BigIntegerField()
    workflow = models.CharField(max_length=200)
    node_path = models.CharField(max_length=1000, blank=True)
    message = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    response_schema = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=InterruptStatus.choices, default=InterruptStatus.PENDING)
    answer = models.JSONField(null=True, blank=True)
    answered_by = models.CharField(max_length=200, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answer_seq = models.BigIntegerField(null=True, blank=True)
    # engine.asking_digest of what this asking shows (message, payload, schema): an answer that
    # carries another digest was given to something else and is refused ("" on rows from before).
    digest = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # Human steps (engine.human), kept in step with the log for the inbox (wfapp.human.assignment):
    # who may answer now as "|ann|group:finance|" ("" = anyone who may answer), who holds it,
    # its deadline, when the clock next has something to do, and the quorum's approvals so far.
    assignees = models.TextField(blank=True, default="")
    claimed_by = models.CharField(max_length=200, blank=True, default="")
    due_at = models.DateTimeField(null=True, blank=True)
    timer_at = models.DateTimeField(null=True, blank=True)
    approvals_required = models.PositiveIntegerField(default=1)
    approvals = models.JSONField(default=list, blank=True)  # [{"actor": ..., "answer": ...}]
    policy = models.JSONField(null=True, blank=True)  # the question's engine.human.HumanPolicy

    class Meta:
        ordering = ["created_at", "id"]
        permissions = [
            ("answer_interrupt", "Can answer interrupts"),
            ("reassign_interrupt", "Can reassign questions held or assigned to others"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "interrupt_id", "request_seq"], name="wfapp_interrupt_request"
            ),
            models.UniqueConstraint(
                fields=["session", "interrupt_id"],
                condition=Q(status="pending"),
                name="wfapp_interrupt_one_pending",
            ),
        ]
        indexes = [
            models.Index(
                fields=["created_at", "id"], condition=Q(status="pending"), name="wfapp_interrupt_pending"
            ),
            # The inbox's counts and pages by status. SQLite cannot answer `status = ?` from the
            # partial index alone (it reads every row to check the bound value), so with
            # 100,000 answered questions each count took 15-25 ms; this one covers them.
            models.Index(fields=["status", "created_at", "id"], name="wfapp_interrupt_status"),
            # A run's questions by status, in the default order (the sweep, the store's
            # projections, the run page). Without it SQLite, which keeps no statistics, looks
            # `session = ? AND status = ?` up through the index above (it saves the sort) and
            # reads every pending row for each run: with 10,000 waiting runs the sweep's query
            # took 100 s instead of 15 ms.
            models.Index(fields=["session", "status", "created_at", "id"], name="wfapp_interrupt_run_status"),
            # The deadline sweep: pending questions whose clock has something due.
            models.Index(
                fields=["timer_at"],
                condition=Q(status="pending", timer_at__isnull=False),
                name="wfapp_interrupt_timer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}/{self.interrupt_id} ({self.status})"


class AttemptOutcome(models.TextChoices):
    ACCEPTED = "accepted"
    ALREADY_ANSWERED = "already_answered"
    INVALID = "invalid"
    REFUSED = "refused"  # the run no longer accepts answers
    FORBIDDEN = "forbidden"  # the user may not answer (no wfapp.answer_interrupt)
    TOO_LARGE = "too_large"  # the request was over WFAPP_MAX_ANSWER_BYTES (its value is not kept)
    BUSY = "busy"  # the run kept moving while the answer was checked; nothing was recorded
    STALE = "stale"  # its asking no longer waits (asked again, withdrawn) or showed something else


class AnswerAttempt(models.Model):
    """An append-only audit record of every answer given, accepted or refused."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="answer_attempts")
    interrupt_id = models.CharField(max_length=200)
    actor = models.CharField(max_length=200, blank=True)
    value = models.JSONField(null=True)
    outcome = models.CharField(max_length=20, choices=AttemptOutcome.choices)
    detail = models.TextField(blank=True)
    event_seq = models.BigIntegerField(null=True, blank=True)
    # The asking the attempt was given to (the seq of its request) and the digest of what its giver
    # was shown, when the attempt named them.
    request_seq = models.BigIntegerField(null=True, blank=True)
    digest = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "interrupt_id"], name="wfapp_attempt_interrupt")]

    def __str__(self) -> str:
        return f"{self.session_id}/{self.interrupt_id} {self.outcome} by {self.actor or '-'}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValueError("Answer attempts are append-only; they cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ValueError("Answer attempts are append-only; they cannot be deleted.")


class WorkflowAccess(models.Model):
    """A per-workflow rule: what members of ``group`` may do with runs of ``workflow``.

    A workflow with no rule keeps the global permissions; once it has one, only its rules
    decide (``wfapp.human.permissions``).
    """

    workflow = models.CharField(max_length=200, db_index=True, help_text="The registered workflow's name.")
    group = models.ForeignKey("auth.Group", on_delete=models.CASCADE, related_name="workflow_access")
    may_start = models.BooleanField(default=False, help_text="Start runs of the workflow.")
    may_answer = models.BooleanField(default=False, help_text="Answer its questions (and view its runs).")
    may_view = models.BooleanField(default=True, help_text="See its runs, their questions and events.")

    class Meta:
        verbose_name = "workflow access rule"
        constraints = [
            models.UniqueConstraint(fields=["workflow", "group"], name="wfapp_access_workflow_group")
        ]

    def __str__(self) -> str:
        can = [
            word
            for word, on in (("start", self.may_start), ("answer", self.may_answer), ("view", self.may_view))
            if on
        ]
        return f"{self.workflow}: {self.group} may {', '.join(can) or 'nothing'}"


class SavedFilter(models.Model):
    """A user's named filters for the inbox or the runs list: the page's GET query, applied as a link."""

    PAGES = (("inbox", "Inbox"), ("runs", "Runs"))

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    page = models.CharField(max_length=8, choices=PAGES)
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "page", "name"], name="wfapp_savedfilter_user_page_name")
        ]

    def __str__(self) -> str:
        return f"{self.page}: {self.name}"
