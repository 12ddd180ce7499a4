"""Notifications: who is told what, by mail and webhook, outside the runs' hot path.

``outbox`` turns what happened (a question asked, a run failed; see ``NoticeKind``) into
``Notice`` rows, once each whatever the number of processes, and fans each out into
``Delivery`` rows (one per recipient mailbox, one per configured webhook URL). ``sending``
sends what is due, retrying with backoff and recording every try. ``pump`` does both; the
embedded runtime runs it every ``WFAPP_NOTIFY_SECONDS`` in a task of its own, and in workers
mode a periodic procrastinate job does (``wfapp.worker.notify_tasks``).

May import: ``wfapp.runs`` and below. ``wfapp.apps`` connects its receivers at start-up (the
runtime's ``COMPANIONS``, the store's ``hooks.decided``).
"""
