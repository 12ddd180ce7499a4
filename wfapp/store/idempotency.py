"""The API's idempotency records expire: ``purge_expired`` deletes those past
``WFAPP_IDEMPOTENCY_HOURS`` (the embedded runtime's maintenance and the scaled mode's sweep call
it; ``wfapp.api.idempotency`` writes and reads them).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from wfapp.models import IdempotencyRecord

PURGE_BATCH = 1000  # records one purge looks at: a range of the primary key, read from its index


def purge_expired() -> int:
    """Delete the records older than ``WFAPP_IDEMPOTENCY_HOURS``; return how many went.

    Records are created in primary-key order, so the expired ones are the oldest keys: one
    purge deletes the expired among the ``PURGE_BATCH`` oldest (an index range, no table scan)
    and costs one index lookup when nothing is due. Called every sweep, it keeps up with far
    more keys than an API takes. A reservation left by a request that died is purged too.
    """
    cutoff = timezone.now() - timedelta(hours=float(settings.WFAPP_IDEMPOTENCY_HOURS))
    oldest = IdempotencyRecord.objects.order_by("pk").values_list("pk", "created_at").first()
    if oldest is None or oldest[1] >= cutoff:
        return 0
    window = IdempotencyRecord.objects.filter(pk__lt=oldest[0] + PURGE_BATCH, created_at__lt=cutoff)
    deleted, _ = window.delete()
    return deleted
