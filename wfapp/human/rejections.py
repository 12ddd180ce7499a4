"""Reject with reason: an outcome of approve/reject questions whose reason is required and shown.

An approve/reject question is one the inbox could bulk-answer (``bulk_decision``). Rejecting it
with a reason (``answering.answer_interrupt(..., reason=...)``, the dashboard's "Reject with
reason", ``wf answer --reason``, the API's ``reason``) needs the answer to be the rejection and
the reason to be text. The reason goes into the answer itself when the question's schema has a
text field for it (``reason``, ``comment``, ``feedback`` or ``note``: the node receives it, in
the same event); otherwise it is recorded as the run's comment on that question right after
the answer. Either way the timeline and the audit show it with the rejection.
"""

from __future__ import annotations

from typing import Any

from wfapp.errors import RejectionReasonError
from wfapp.schema_forms.form import bulk_decision, reason_field

MAX_REASON = 5000


def with_reason(schema: Any, value: Any, reason: Any) -> tuple[Any, str | None]:
    """The answer carrying the rejection's ``reason``, and the reason still to record as a
    comment (None when the answer holds it); ``BadRequest`` saying what is wrong otherwise."""
    decision = bulk_decision(schema)
    if decision is None:
        raise RejectionReasonError("Only an approve/reject question can be rejected with a reason")
    rejected = (
        value == decision.reject_value
        if decision.field is None
        else (isinstance(value, dict) and value.get(decision.field) == decision.reject_value)
    )
    if not rejected:
        raise RejectionReasonError("A reason goes with a rejection: this answer does not reject")
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise RejectionReasonError("A rejection with reason needs the reason")
    if len(text) > MAX_REASON:
        raise RejectionReasonError(f"A reason is at most {MAX_REASON} characters; this one has {len(text)}")
    field = reason_field(schema)
    if field is None or not isinstance(value, dict):
        return value, text
    return {**value, field: text}, None
