"""``{{ run|not_deployed }}``: "version N not deployed" when a run's version is not registered here."""

from __future__ import annotations

from django import template

from wfapp.models import Session
from wfapp.runs.versions import not_deployed_label

register = template.Library()


@register.filter
def not_deployed(run: Session) -> str:
    """The note for a run whose workflow version is not registered, or ""."""
    return not_deployed_label(run) or ""
