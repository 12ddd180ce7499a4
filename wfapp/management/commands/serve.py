"""Serve the dashboard with Daphne and execute workflows in the same event loop.

Daphne has no ASGI lifespan, so the runtime starts here: once the reactor runs, the runtime
takes up runs left behind and then executes runs as they are started or answered. With
``WFAPP_RUNTIME=workers`` this process executes no runs (``manage.py wf worker`` does); its
runtime only rings doorbells for other processes' commits when there is no Redis to carry them.
Request bodies are capped as Daphne reads them (``wfapp.management.body_limit``). It refuses
to start, saying what to run, on a database that is not migrated or (production
profile) before ``collectstatic``: either would answer 500 on every page.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from wfapp.demos import expense_approval_people as people
from wfapp.runs.checks import migration_problem, static_problem
from wfapp.runs.mode import WorkersMisconfigured, check_workers_config, workers_mode


class Command(BaseCommand):
    help = "Serve wfapp (pages, websockets, static files) and run workflows, in one process."
    requires_migrations_checks = False  # handle() refuses to start instead of warning

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: Any, **options: Any) -> None:
        problems = [problem for problem in (migration_problem(), static_problem()) if problem]
        connections.close_all()  # the check's connection: the serving threads take their own
        if problems:
            raise CommandError("wfapp cannot serve yet.\n" + "\n".join(problems))
        # Importing daphne.server installs Twisted's asyncio reactor: it must come first.
        import asyncio
        import gc

        import daphne.server  # noqa: F401  (installs the reactor: before twisted.internet's)
        from daphne.endpoints import build_endpoint_description_strings
        from django.conf import settings
        from twisted.internet import defer, reactor

        from wfapp.asgi import application
        from wfapp.management.body_limit import Server
        from wfapp.runs import runtime
        from wfapp.store import doorbell

        scaled = workers_mode()
        if scaled:
            try:
                check_workers_config()
            except WorkersMisconfigured as error:
                raise CommandError(str(error)) from None
        in_memory = doorbell.process_local()
        engine = runtime.Runtime(sweep=False, watch=in_memory) if scaled else runtime.Runtime()
        runtime.install(engine)

        def ready() -> None:
            # Everything imported so far lives as long as the process: move it out of the
            # collector's reach, so full collections stay short while runs replay their logs.
            gc.collect()
            gc.freeze()
            asyncio.get_event_loop().create_task(engine.start())

        def shutdown() -> defer.Deferred[None]:
            return defer.Deferred.fromFuture(asyncio.ensure_future(engine.stop()))

        reactor.addSystemEventTrigger("before", "shutdown", shutdown)  # type: ignore[arg-type]
        host, port = options["host"], options["port"]
        self.stdout.write(f"wfapp serving http://{host}:{port}/ (Ctrl-C to stop)")
        if scaled:
            self.stdout.write(
                "runs execute in worker processes (WFAPP_RUNTIME=workers): start manage.py wf worker"
            )
            if engine.watch is not None:
                self.stdout.write(
                    "REDIS_URL is not set: live updates across processes need it (this process polls "
                    "the database for other processes' changes instead)"
                )
        if people.registered():  # last, next to the address: who to log in as
            for line in people.login_lines():
                self.stdout.write(line)
            connections.close_all()
        self.stdout.flush()
        Server(
            application=application,
            max_request_bytes=settings.WFAPP_MAX_REQUEST_BYTES,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            ready_callable=ready,
            websocket_max_message_size=settings.DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE,
            websocket_max_frame_size=settings.DAPHNE_WEBSOCKET_MAX_FRAME_SIZE,
            verbosity=options["verbosity"],
        ).run()
