"""The human-steps layer: who may do what to a question, and the people's own records.

``permissions`` (who may start, view, answer, cancel, retry; per-workflow access), ``assignment``
(assignees, claims and the quorum's rules; the inbox's tabs), ``claims`` (claim, unclaim,
reassign), ``comments``, ``rejections`` (reject with a reason) and ``audit`` (every answer
attempt, accepted or refused).

May import: ``wfapp.store`` and below. Never ``wfapp.runs`` or anything above it.
"""
