"""What the store tells the layers above it, without importing them: Django signals sent inside
the transaction of the write they report, which the layers above connect to at start-up
(``wfapp.apps``). What a receiver writes commits, or rolls back, with that write; an exception
it raises refuses the write.
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent in the append's transaction of each decision on a question, with ``session_id``,
# ``interrupt_id``, ``decision`` (claim, unclaim, reassign, escalate, remind), ``actor``, ``users``
# and ``seq`` (the decision event's). What a receiver writes commits, or rolls back, with it; an
# exception it raises refuses the decision.
decided = Signal()

# Sent in the append's transaction of each accepted answer that resolves its question, with
# ``session_id``: workers mode defers the run's advance job there (``wfapp.runs.dispatch``), so
# the job commits with the answer.
answer_recorded = Signal()

# Sent after a comment is appended, with ``session_id``, ``workflow``, ``seq``, ``author`` (the
# commenter's name), ``text`` and ``interrupt`` (the pk of the question it is about, or None):
# ``wfapp.notify.triggers`` tells the users it mentions as ``@name``.
commented = Signal()
