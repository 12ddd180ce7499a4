"""``{{ run|outcome }}``: how a completed run ended, in words ("approved"), or ""."""

from __future__ import annotations

from django import template

from wfapp.models import Session
from wfapp.run_labels import outcome_of

register = template.Library()


@register.filter
def outcome(run: Session) -> str:
    """The outcome of a completed run (``wfapp.run_labels``), or "" for any other."""
    return outcome_of(run.workflow, run.version, run.status, run.output) or ""
