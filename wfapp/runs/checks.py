"""System checks, and what ``serve`` and ``wf`` check before they start.

A registered workflow that does not import or validate fails ``manage.py check``; an open run
whose log would not resume on the registered code is a warning. The production profile's
static files storage needs ``collectstatic`` to have run (without its manifest every page
answers 500): ``check --deploy`` says so, and ``serve`` refuses to start. A database without
wfapp's tables gets the command to run instead of a traceback.
"""

from __future__ import annotations

from typing import Any

from django.conf import STATICFILES_STORAGE_ALIAS, settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import ManifestFilesMixin
from django.core import checks
from django.core.files.storage import storages
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor

from wfapp.registry import load_workflows
from wfapp.runs.versions import NOT_DEPLOYED, check_runs

# The newest open runs the warning replays (each reads its log); `manage.py wf replay-check` checks all.
REPLAY_CHECK_RUNS = 100

COLLECTSTATIC = "python manage.py collectstatic --noinput"
MIGRATE = "python manage.py migrate"
_COLLECTSTATIC_IGNORES = ["CVS", ".*", "*~"]  # what collectstatic leaves out by default


@checks.register("wfapp")
def check_workflows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Load every workflow in ``WFAPP_WORKFLOWS`` and report each one that is broken."""
    _, problems = load_workflows()
    return [
        checks.Error(problem.message, hint=problem.hint, obj=problem.path, id=f"wfapp.{problem.code}")
        for problem in problems
    ]


def static_problem() -> str | None:
    """Why the static files cannot be served as the storage expects, or None.

    Only a manifest storage (the production profile's) needs ``collectstatic``; the embedded
    profile serves straight from the source folders.
    """
    storage = storages[STATICFILES_STORAGE_ALIAS]
    if not isinstance(storage, ManifestFilesMixin):
        return None
    root = settings.STATIC_ROOT
    todo = f"run `{COLLECTSTATIC}` (with the same settings) first."
    if storage.read_manifest() is None:
        return f"The static files have not been collected into {root}, so every page would answer 500: {todo}"
    collected, _ = storage.load_manifest()
    missing = sorted(
        {path for finder in finders.get_finders() for path, _ in finder.list(_COLLECTSTATIC_IGNORES)}
        - set(collected)
    )
    if missing:
        return (
            f"{len(missing)} static files are missing from those collected into {root} (for example "
            f"{missing[0]}), so the pages that use them would answer 500: {todo}"
        )
    return None


@checks.register(checks.Tags.staticfiles, deploy=True)
def check_collected_static(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``check --deploy``: the static files were collected (only ``--deploy``: collectstatic runs checks too)."""
    problem = static_problem()
    hint = "Collect them again after every upgrade, before starting the server."
    return [checks.Error(problem, hint=hint, id="wfapp.static_not_collected")] if problem else []


def migration_problem(alias: str = DEFAULT_DB_ALIAS) -> str | None:
    """Which migrations the database still lacks, in words with the command to run, or None."""
    connection = connections[alias]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if not plan:
        return None
    apps = sorted({migration.app_label for migration, _ in plan})
    name = connection.settings_dict["NAME"]
    return (
        f"The database {name} is not migrated ({len(plan)} migrations of {', '.join(apps)} to apply): "
        f"run `{MIGRATE}` first."
    )


@checks.register("wfapp_runs")
def check_open_runs(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Warn about open runs whose log no longer replays, or whose version is not registered."""
    try:
        results = check_runs(limit=REPLAY_CHECK_RUNS)
    except DatabaseError:
        return []  # no database or no tables yet (before migrate): no runs to check
    return [
        checks.Warning(
            f"Run {result.run} of {result.workflow} would not resume: {result.detail}",
            hint=(
                f"Register version {result.version} of {result.workflow} again (next to the new one)."
                if result.result == NOT_DEPLOYED
                else "Keep the old version registered next to the new one (Workflow(version=...)), "
                "or change the code so this log replays; `manage.py wf replay-check` lists every run."
            ),
            obj=result.run,
            id="wfapp.W002" if result.result == NOT_DEPLOYED else "wfapp.W001",
        )
        for result in results
        if not result.ok
    ]


# Connections a pool needs beyond the threads that keep one for the process's life, so requests,
# answers and live renders do not queue for one (and fail after the pool's timeout) under load.
POOL_HEADROOM = 4


@checks.register("wfapp")
def check_pool_size(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Warn when psycopg's pool leaves too few connections beside the store threads' own."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if not isinstance(pool, dict) or "max_size" not in pool:
        return []
    kept = int(settings.WFAPP_STORE_THREADS) + 1  # the store threads and asgiref's shared thread
    if pool["max_size"] >= kept + POOL_HEADROOM:
        return []
    return [
        checks.Warning(
            f"The PostgreSQL pool holds {pool['max_size']} connections and {kept} of them stay with "
            f"the store threads (WFAPP_STORE_THREADS={settings.WFAPP_STORE_THREADS}) and asgiref's "
            f"thread: requests and live updates would wait for the rest and fail after its timeout.",
            hint=f"Set WFAPP_DB_POOL_SIZE to at least {kept + POOL_HEADROOM + 1} (one is the group "
            "commit's), or lower WFAPP_STORE_THREADS.",
            id="wfapp.W010",
        )
    ]
