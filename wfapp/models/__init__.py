"""The database schema, the lowest layer: every model of the ``wfapp`` app, one module per area.

- ``runs``: sessions (runs), their event logs, the inbox projection, answer attempts, workflow
  access rules, saved filters;
- ``tokens``: personal API tokens (stored hashed) and the API's idempotency records;
- ``notify``: notices, deliveries and their attempts, preferences, single-use answer links.

Imports nothing of ``wfapp`` but its settings; everything above imports its models from here.
"""

from wfapp.models.notify import (
    AnswerLink,
    Channel,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    Notice,
    NoticeKind,
    NotifyPreference,
)
from wfapp.models.runs import (
    AnswerAttempt,
    AttemptOutcome,
    Event,
    Interrupt,
    InterruptStatus,
    RunStatus,
    SavedFilter,
    Session,
    WorkflowAccess,
)
from wfapp.models.tokens import ApiToken, IdempotencyRecord

__all__ = [
    "AnswerAttempt",
    "AnswerLink",
    "ApiToken",
    "AttemptOutcome",
    "Channel",
    "Delivery",
    "DeliveryAttempt",
    "DeliveryStatus",
    "Event",
    "IdempotencyRecord",
    "Interrupt",
    "InterruptStatus",
    "Notice",
    "NoticeKind",
    "NotifyPreference",
    "RunStatus",
    "SavedFilter",
    "Session",
    "WorkflowAccess",
]
