"""Leases: which worker may execute (and append to) a run, fenced by an epoch.

A claim is a conditional UPDATE that increments ``lease_epoch``; every append by a worker
names its epoch, so a worker whose lease was taken over writes nothing. Owners are
``host:pid:token``; a lease whose owner process on this host is gone is free at once,
otherwise it is free when it expires.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from wfapp.models import Interrupt, InterruptStatus, RunStatus, Session
from wfapp.registry import undeployed_runs

_HOST = socket.gethostname()


@dataclass(frozen=True, slots=True)
class Lease:
    session_id: str
    owner: str
    epoch: int


class Release(Enum):
    RELEASED = "released"  # the run is settled; nobody holds it now
    MORE_WORK = "more_work"  # events arrived after the last settled status: advance again
    LOST = "lost"  # someone else claimed it


def new_owner() -> str:
    """A fresh owner name for this process."""
    return f"{_HOST}:{os.getpid()}:{secrets.token_hex(4)}"


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in {"Z", "X"}
    except (OSError, IndexError):
        return False


def owner_is_gone(owner: str) -> bool:
    """True when ``owner`` names a process on this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    return _pid_gone(int(pid_text))


def _is_free(row: Mapping[str, Any], now: datetime) -> bool:
    owner = row["lease_owner"]
    expires = row["lease_expires_at"]
    return not owner or expires is None or expires <= now or owner_is_gone(str(owner))


def claim(session_id: str, owner: str, ttl: float, *, force: bool = False) -> Lease | None:
    """Take the run's lease if it is free (or unconditionally with ``force``); None if held."""
    now = timezone.now()
    row = (
        Session.objects.filter(pk=session_id).values("lease_owner", "lease_epoch", "lease_expires_at").first()
    )
    if row is None or (not force and not _is_free(row, now)):
        return None
    epoch = row["lease_epoch"] + 1
    taken = Session.objects.filter(pk=session_id, lease_epoch=row["lease_epoch"]).update(
        lease_owner=owner, lease_epoch=epoch, lease_expires_at=now + timedelta(seconds=ttl)
    )
    return Lease(session_id, owner, epoch) if taken else None


def renew(owner: str, epochs: Mapping[str, int], ttl: float) -> set[str]:
    """Extend the leases ``owner`` holds on these runs (run -> the epoch its claim took); return
    the runs another claim took over since. A lease released meanwhile is not lost, and a run
    claimed after the call began is not among ``epochs``, so the caller judges it by nothing here."""
    if not epochs:
        return set()
    Session.objects.filter(pk__in=list(epochs), lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=ttl)
    )
    now = Session.objects.filter(pk__in=list(epochs)).values_list("pk", "lease_epoch")
    return {pk for pk, epoch in now if epoch != epochs[pk]}


def release(lease: Lease) -> Release:
    """Give the lease up if the run is settled; otherwise say whether more work or a loss."""
    with transaction.atomic():
        row = (
            Session.objects.filter(pk=lease.session_id)
            .values("lease_owner", "lease_epoch", "last_seq", "settled_seq", "status")
            .first()
        )
        if row is None or (row["lease_owner"], row["lease_epoch"]) != (lease.owner, lease.epoch):
            return Release.LOST
        if row["last_seq"] > row["settled_seq"] or row["status"] == RunStatus.RUNNING:
            return Release.MORE_WORK
        if row["status"] == RunStatus.WAITING and not _asks(lease.session_id).exists():
            # "Waiting" with nothing to wait for: an answer landed as the engine closed its turn
            # turn. Another advance takes it up instead of stranding the run.
            return Release.MORE_WORK
        # Conditional on last_seq too: an answer committed since the read (PostgreSQL reads do not
        # lock) means more work, not a release that would leave the answer without a worker.
        released = Session.objects.filter(
            pk=lease.session_id, lease_epoch=lease.epoch, last_seq=row["last_seq"]
        ).update(lease_owner=None, lease_expires_at=None)
        return Release.RELEASED if released else Release.MORE_WORK


def drop(lease: Lease) -> None:
    """Give the lease up whatever state the run is in (it will be taken up again later)."""
    Session.objects.filter(pk=lease.session_id, lease_owner=lease.owner, lease_epoch=lease.epoch).update(
        lease_owner=None, lease_expires_at=None
    )


def drop_all(owner: str) -> int:
    """Give up every lease ``owner`` holds (a runtime shutting down)."""
    return Session.objects.filter(lease_owner=owner).update(lease_owner=None, lease_expires_at=None)


def _asks(session_id: Any) -> QuerySet[Interrupt]:
    return Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)


def runs_needing_work(limit: int = 200) -> list[str]:
    """Runs that some worker should advance now, that no live worker holds, and whose
    workflow version is not missing here (those wait until it is registered again)."""
    now = timezone.now()
    undeployed = undeployed_runs()
    needing = Session.objects.filter(
        Q(status=RunStatus.RUNNING)
        | Q(status=RunStatus.WAITING, last_seq__gt=F("settled_seq"))
        | Q(status=RunStatus.WAITING) & ~Exists(_asks(OuterRef("pk")))
    )
    rows = (
        (needing if undeployed is None else needing.exclude(undeployed))
        .values("id", "lease_owner", "lease_expires_at")
        .order_by("updated_at")[:limit]
    )
    return [row["id"] for row in rows if _is_free(row, now)]
