"""The live dashboard at team scale: many open pages while operators answer at a steady rate.

    .venv/bin/python -m bench.live_load --out load.json [--tiny]
    DATABASE_URL=postgres://... REDIS_URL=redis://.../N .venv/bin/python -m bench.live_load --out load.json

One real server process (``manage.py serve``: Daphne and the embedded runtime, as ``make run``
serves) per mode: embedded SQLite, and PostgreSQL + Redis (the channel layer) when
``DATABASE_URL`` and ``REDIS_URL`` are set; each on a fresh data directory and, for PostgreSQL,
a database of its own, created and dropped. The ``bench_ask`` runs (one yes/no question each)
are started before the server, in the benchmark's process; operators log in with the login
form; then, per phase (a baseline of a few open pages, then the
full load), inbox pages and run pages are opened as a browser opens them (the page, then its
websocket and hello) and the operators answer the questions through the real answer form (an
htmx POST with the CSRF header) at ``--rate`` answers a second for ``--duration`` seconds, each
answer a question no page has answered yet. Every answer should reach every open inbox (its
card closes) and each run page should get its run's completion.

Reported per phase: answer latency (POST to reply), inbox push latency (POST to the frame
closing the card on each open inbox), run-page push latency (POST to the frame with the run's
completion), frames per answer per socket, the server's CPU seconds per answer (``/proc`` of its
pid, from the first answer until every update arrived or ``GRACE_S`` passed), 5xx replies, and
dropped (closed by the server) or deaf sockets (an update they should have had never came). The
JSON goes to ``--out``, a short text report beside it (``.txt``). The machine's load average is
noted: on a shared machine the figures are pessimistic.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import secrets
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.dashboard_client import (  # noqa: E402
    FLOWS,
    Browser,
    Form,
    Server,
    database_url,
    environ_for_server,
    forms,
    serving,
)
from bench.dashboard_stats import percentiles  # noqa: E402
from bench.live_load_client import Page, server_cpu_s  # noqa: E402
from bench.one_database import in_subprocess, write_result  # noqa: E402

FULL: dict[str, Any] = {
    "operators": 20,
    "inbox_pages": 150,
    "run_pages": 50,
    "rate": 10.0,
    "duration": 60.0,
    "baseline_pages": 5,
    "baseline_duration": 20.0,
}
TINY: dict[str, Any] = {
    "operators": 3,
    "inbox_pages": 6,
    "run_pages": 2,
    "rate": 4.0,
    "duration": 3.0,
    "baseline_pages": 2,
    "baseline_duration": 3.0,
}
TARGETS_S = {"answer_p95": 0.300, "push_p95": 0.500}  # issue 28's "done when"
GRACE_S = 15.0  # how long after the last answer an update may still arrive
GROUP = "bench-operators"

_posts = ThreadPoolExecutor(max_workers=48, thread_name_prefix="bench-post")  # urllib is synchronous
_db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-db")  # so is Django's ORM


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


async def _in(pool: ThreadPoolExecutor, fn: Any, *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


# -- setup (Django in this process, on the server's database) ----------------------------------


def _operators(count: int, password: str) -> list[str]:
    """``count`` operators in one group that may start runs and answer: one permission scope."""
    from django.contrib.auth.models import Group, Permission, User

    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        *Permission.objects.filter(
            codename__in=["answer_interrupt", "start_run"], content_type__app_label="wfapp"
        )
    )
    names = []
    for i in range(count):
        user, _ = User.objects.get_or_create(username=f"operator-{i + 1:02d}")
        user.set_password(password)
        user.save()
        user.groups.add(group)
        names.append(user.get_username())
    return names


def _seed(count: int, username: str) -> None:
    """``count`` ``bench_ask`` runs waiting for their question, started in this process (as the
    CLI starts runs) before the server starts: starting hundreds through the start form on a
    loaded machine takes longer than the measurement, and is not what is measured."""
    from django.contrib.auth.models import User

    from engine import Runner
    from wfapp.registry import get_workflow
    from wfapp.runs import starting
    from wfapp.store.events import DjangoEventStore

    async def seed() -> None:
        user = await User.objects.aget(username=username)
        runner = Runner(get_workflow("bench_ask"), store=DjangoEventStore())
        for i in range(count):
            run, _ = await starting.create_run("bench_ask", {"label": f"load {i}"}, user=user)
            await runner.advance(run)

    asyncio.run(seed())


def _questions() -> list[tuple[int, str]]:
    """(interrupt pk, run) of the pending questions of the ``bench_ask`` runs, oldest first."""
    from wfapp.models import Interrupt

    rows = Interrupt.objects.filter(workflow="bench_ask", status="pending").order_by("pk")
    return [(pk, str(run)) for pk, run in rows.values_list("pk", "session_id")]


def _completions(runs: list[str]) -> dict[str, int]:
    """Run -> the seq of its completion event, for the runs completed so far."""
    from wfapp.models import Event

    rows = Event.objects.filter(session_id__in=runs, kind="status", data__status="completed")
    return {str(run): seq for run, seq in rows.values_list("session_id", "seq")}


def _close_db() -> None:
    from django.db import connections

    connections.close_all()


# -- the load ----------------------------------------------------------------------------------


MORE = re.compile(r'hx-get="([^"]*after=[^"]*)"')
ANSWER_URL = re.compile(r"/interrupts/(\d+)/answer/")


async def _retried(fn: Any, attempts: int = 3) -> Any:
    """``fn()`` in a thread, again after a timeout (a loaded machine may answer after the client
    stopped waiting)."""
    for attempt in range(attempts):
        try:
            return await _in(_posts, fn)
        except OSError:
            if attempt == attempts - 1:
                raise
            log("  timed out; again")
    return None


def answer_forms(browser: Browser) -> dict[int, Form]:
    """Every pending question's answer form, read from the inbox's pages as a browser shows them."""
    found: dict[int, Form] = {}
    path: str | None = "/"
    while path:
        for attempt in range(3):  # a loaded machine may answer a page later than the client waits
            try:
                _, text = browser.get(path)
                break
            except OSError:
                if attempt == 2:
                    raise
        for form in forms(text):
            match = ANSWER_URL.search(form.url)
            if match:
                found[int(match.group(1))] = form
        more = MORE.search(text)
        path = more.group(1).replace("&amp;", "&") if more else None
    return found


def _own(form: Form, browser: Browser) -> Form:
    """The form as this operator's own page has it: with their CSRF token."""
    token = browser.cookie("csrftoken")
    fields = [(k, token if k == "csrfmiddlewaretoken" else v) for k, v in form.fields]
    return Form(form.url, fields, form.buttons)


async def _open_all(pages: list[Page]) -> None:
    gate = asyncio.Semaphore(8)

    async def one(page: Page) -> None:
        async with gate:
            try:
                await page.open()
            except Exception as exc:
                page.error = f"opening: {type(exc).__name__}: {exc}"

    await asyncio.gather(*(one(p) for p in pages))
    deadline = time.monotonic() + 60
    while any(p.first_frame_at is None and not p.error for p in pages) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)


async def phase(
    server: Server,
    browsers: list[Browser],
    questions: list[tuple[int, str]],
    answer_forms_by_pk: dict[int, Form],
    inbox_pages: int,
    run_pages: int,
    rate: float,
    duration: float,
) -> dict[str, Any]:
    """One load: open the pages, answer ``rate * duration`` questions, read what reached the pages."""
    count = int(rate * duration)
    if len(questions) < count:
        raise RuntimeError(f"{len(questions)} questions for {count} answers")
    asked = questions[:count]
    run_pages = min(run_pages, count)
    watched = sorted({(j * count) // max(run_pages, 1) for j in range(run_pages)})
    pages = [Page("inbox", browsers[i % len(browsers)]) for i in range(inbox_pages)]
    pages += [Page("run", browsers[j % len(browsers)], run=asked[k][1]) for j, k in enumerate(watched)]
    load_before = load_average()
    await _open_all(pages)
    opened = [p.first_frame_at - p.opened_at for p in pages if p.first_frame_at is not None]
    await asyncio.sleep(1.0)

    answers: list[dict[str, Any]] = []

    async def answer(k: int) -> None:
        pk, run = asked[k]
        browser = browsers[k % len(browsers)]
        t0 = time.time()
        try:
            reply = await _in(_posts, browser.answer, _own(answer_forms_by_pk[pk], browser))
            status = reply.status
            if status != 200:
                log(f"answer {pk}: {status} {reply.body[:300]!r}")
        except Exception as exc:  # a refused connection, a timeout: counted, not fatal
            status = 0
            log(f"answer {pk}: {type(exc).__name__}: {exc}")
        answers.append({"pk": pk, "run": run, "t0": t0, "t1": time.time(), "status": status})

    cpu0, t_start = server_cpu_s(server.proc.pid), time.time()  # type: ignore[union-attr]
    tasks = []
    for k in range(count):
        await asyncio.sleep(max(0.0, t_start + k / rate - time.time()))
        tasks.append(asyncio.create_task(answer(k)))
    await asyncio.gather(*tasks)
    t_answered = time.time()

    inboxes = [p for p in pages if p.kind == "inbox"]
    runs = [p for p in pages if p.kind == "run"]
    done = [a for a in answers if a["status"] == 200]
    completions: dict[str, int] = {}

    def all_arrived() -> bool:
        for page in inboxes:
            if page.close_code is None and any(page.answered_at(a["pk"], a["t0"])[0] is None for a in done):
                return False
        answered_runs = {a["run"] for a in done}
        for page in runs:
            if page.run in answered_runs and page.close_code is None:
                seq = completions.get(page.run)
                if seq is None or page.seq_at(seq) is None:
                    return False
        return True

    deadline = t_answered + GRACE_S
    while time.time() < deadline:
        completions.update(await _in(_db, _completions, [p.run for p in runs]))
        if all_arrived():
            break
        await asyncio.sleep(0.25)
    t_end = time.time()
    cpu = server_cpu_s(server.proc.pid) - cpu0  # type: ignore[union-attr]
    completions.update(await _in(_db, _completions, [p.run for p in runs]))
    dropped = [p for p in pages if p.close_code is not None]
    await asyncio.gather(*(p.close() for p in pages))

    inbox_lat: list[float] = []
    deaf: set[int] = set()
    missed = whole_lists = 0
    for i, page in enumerate(inboxes):
        for a in done:
            at, whole = page.answered_at(a["pk"], a["t0"])
            if at is None:
                missed += 1
                deaf.add(i)
            else:
                inbox_lat.append(at - a["t0"])
                whole_lists += whole
    posted = {a["run"]: a for a in done}
    run_lat: list[float] = []
    for j, page in enumerate(runs):
        given = posted.get(page.run)
        seq = completions.get(page.run)
        at = page.seq_at(seq) if seq is not None else None
        if given is None:
            continue
        if at is None:
            deaf.add(len(inboxes) + j)
        else:
            run_lat.append(at - given["t0"])
    n = max(len(done), 1)
    return {
        "pages": {"inbox": len(inboxes), "run": len(runs)},
        "rate": rate,
        "duration_s": duration,
        "answers": len(answers),
        "answered_ok": len(done),
        "answer_s": percentiles([a["t1"] - a["t0"] for a in answers]),
        "inbox_push_s": percentiles(inbox_lat),
        "run_push_s": percentiles(run_lat),
        "first_frame_s": percentiles(opened),
        "expected_inbox_updates": len(done) * len(inboxes),
        "missed_inbox_updates": missed,
        "caught_up_by_whole_list": whole_lists,
        "frames_per_answer_per_socket": {
            "inbox": round(
                sum(p.frames_between(t_start, t_end) for p in inboxes) / n / max(len(inboxes), 1), 3
            ),
            "run": round(sum(p.frames_between(t_start, t_end) for p in runs) / n / max(len(runs), 1), 3),
        },
        "server_cpu_s_per_answer": round(cpu / n, 4),
        "server_cpu_s": round(cpu, 2),
        "measured_s": round(t_end - t_start, 1),
        "http_5xx": sum(1 for a in answers if a["status"] >= 500),
        "http_other_failures": sum(1 for a in answers if a["status"] != 200 and a["status"] < 500),
        "dropped_sockets": len(dropped),
        "deaf_sockets": len(deaf),
        "page_errors": sorted({p.error for p in pages if p.error})[:5],
        "load_average": {"before": load_before, "after": load_average()},
    }


async def load(server: Server, usernames: list[str], password: str, params: dict[str, Any]) -> dict[str, Any]:
    browsers = [Browser(server.base) for _ in usernames]
    for browser, username in zip(browsers, usernames, strict=True):
        # One at a time (each hashes a password), again after a timeout on a loaded machine.
        await _retried(functools.partial(browser.login, username, password))
    base_count = int(params["rate"] * params["baseline_duration"])
    full_count = int(params["rate"] * params["duration"])
    questions = await _in(_db, _questions)
    by_pk = await _in(_posts, answer_forms, browsers[0])
    questions = [q for q in questions if q[0] in by_pk]
    base_pages = params["baseline_pages"]
    base_runs = max(1, base_pages // 4)
    log(f"  baseline: {base_pages} pages, {base_count} answers")
    baseline = await phase(
        server,
        browsers,
        questions[:base_count],
        by_pk,
        base_pages - base_runs,
        base_runs,
        params["rate"],
        params["baseline_duration"],
    )
    log(f"  full: {params['inbox_pages']} inbox + {params['run_pages']} run pages, {full_count} answers")
    full = await phase(
        server,
        browsers,
        questions[base_count:],
        by_pk,
        params["inbox_pages"],
        params["run_pages"],
        params["rate"],
        params["duration"],
    )
    await _in(_db, _close_db)
    return {"baseline": baseline, "full": full}


def measure_one(database: str, params: dict[str, Any]) -> dict[str, Any]:
    """Everything on one database, in this process: Django set up, a server, the two phases."""
    from bench.workloads.ours import setup_django

    redis_url = os.environ.get("REDIS_URL", "")  # setup_django forgets it: the server gets it
    data_dir = Path(os.environ.get("WFAPP_DATA_DIR") or tempfile.mkdtemp(prefix="wfload-"))
    log(f"  {database}: a fresh database, migrated")
    os.environ["WFAPP_EXTRA_WORKFLOWS"] = FLOWS  # bench_ask, here as in the server
    setup_django(f"django-{database}", str(data_dir))
    password = secrets.token_urlsafe(16)
    usernames = _operators(params["operators"], password)
    count = int(params["rate"] * params["baseline_duration"]) + int(params["rate"] * params["duration"])
    log(f"  {database}: {count} runs waiting for their question")
    _seed(count, usernames[0])
    env = environ_for_server(data_dir, database_url())
    if database == "postgres":
        env.update(REDIS_URL=redis_url, WFAPP_REDIS_PREFIX=f"wfload{os.getpid()}")
    _close_db()
    log(f"  {database}: starting manage.py serve")
    with serving(data_dir, env) as server:
        phases = asyncio.run(load(server, usernames, password, params))
        errors = server.tail().count("Traceback")
    return {
        "database": database,
        "channel_layer": "redis" if database == "postgres" else "in-memory",
        "server_log_tracebacks": errors,
        **phases,
    }


def modes(only: str | None = None) -> list[str]:
    pg = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
    found = ["sqlite", "postgres"] if pg and os.environ.get("REDIS_URL") else ["sqlite"]
    if only is not None and only not in found:
        raise SystemExit(f"--only {only}: that mode needs DATABASE_URL=postgres://... and REDIS_URL")
    return [only] if only else found


def run_all(params: dict[str, Any], timeout: int, only: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"params": params, "targets_s": TARGETS_S, "cpus": os.cpu_count(), "modes": {}}
    for database in modes(only):
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="wfload-") as data_dir:
            out = Path(data_dir) / "result.json"
            cmd = [
                sys.executable,
                "-m",
                "bench.live_load",
                "--db",
                database,
                "--out",
                str(out),
                "--params",
                json.dumps(params),
            ]
            env = {
                **os.environ,
                "WFAPP_DATA_DIR": data_dir,
                "PYTHONPATH": str(ROOT),
                "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
            }
            result = in_subprocess(cmd, ROOT, env, out, timeout)
        result["duration_s"] = round(time.perf_counter() - t0, 1)
        doc["modes"][database] = result
        log(f"live load on {database}: {result.get('error') or 'done'} ({result['duration_s']:.0f} s)")
    return doc


def _ms(figure: dict[str, Any], key: str) -> str:
    value = figure.get(key)
    return "-" if value is None else f"{value * 1000:.0f}"


def report(doc: dict[str, Any]) -> str:
    """A short text report of a result document."""
    p = doc["params"]
    lines = [
        f"Live load: {p['operators']} operators, {p['rate']:g} answers/s for {p['duration']:g} s; "
        f"{p['inbox_pages']} inbox + {p['run_pages']} run pages (baseline: {p['baseline_pages']} pages); "
        f"{doc.get('cpus')} CPUs",
        "",
    ]
    for database, result in doc["modes"].items():
        if result.get("error"):
            lines += [f"{database}: ERROR {result['error'].splitlines()[0]}", ""]
            continue
        lines.append(f"{database} ({result['channel_layer']} channel layer)")
        for name in ("baseline", "full"):
            r = result[name]
            lines += [
                f"  {name}: {r['pages']['inbox']} inbox + {r['pages']['run']} run pages, "
                f"{r['answered_ok']}/{r['answers']} answers; load average {r['load_average']['before'][0]:.1f}",
                f"    answer p50/p95 {_ms(r['answer_s'], 'p50_s')}/{_ms(r['answer_s'], 'p95_s')} ms; "
                f"inbox push {_ms(r['inbox_push_s'], 'p50_s')}/{_ms(r['inbox_push_s'], 'p95_s')} ms; "
                f"run-page push {_ms(r['run_push_s'], 'p50_s')}/{_ms(r['run_push_s'], 'p95_s')} ms",
                f"    frames/answer/socket inbox {r['frames_per_answer_per_socket']['inbox']}, "
                f"run {r['frames_per_answer_per_socket']['run']}; "
                f"server CPU {r['server_cpu_s_per_answer'] * 1000:.0f} ms/answer",
                f"    5xx {r['http_5xx']}, other failures {r['http_other_failures']}, "
                f"dropped {r['dropped_sockets']}, deaf {r['deaf_sockets']} "
                f"(missed {r['missed_inbox_updates']} of {r['expected_inbox_updates']} inbox updates; "
                f"{r['caught_up_by_whole_list']} by a whole list); first frame p95 "
                f"{_ms(r['first_frame_s'], 'p95_s')} ms",
            ]
        base, full = result["baseline"], result["full"]
        extra = full["pages"]["inbox"] - base["pages"]["inbox"]
        if extra > 0:
            per = (full["server_cpu_s_per_answer"] - base["server_cpu_s_per_answer"]) / extra
            lines.append(f"  each additional open inbox: {per * 1000:.2f} ms server CPU per answer")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="the JSON result (a .txt report beside it)")
    ap.add_argument("--tiny", action="store_true", help="a few pages for a few seconds (< 1 min; CI)")
    ap.add_argument("--operators", type=int)
    ap.add_argument("--inbox-pages", type=int)
    ap.add_argument("--run-pages", type=int)
    ap.add_argument("--rate", type=float, help="answers per second")
    ap.add_argument("--duration", type=float, help="seconds of answering per phase")
    ap.add_argument("--baseline-pages", type=int)
    ap.add_argument("--baseline-duration", type=float, help="seconds of answering in the baseline")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per mode")
    ap.add_argument("--only", choices=("sqlite", "postgres"), help="one mode only")
    ap.add_argument("--db", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.db:
        return write_result(args.out, args.db, lambda: measure_one(args.db, json.loads(args.params)))
    params = dict(TINY if args.tiny else FULL)
    for key in FULL:
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    doc = run_all(params, args.timeout, args.only)
    doc["tiny"] = args.tiny
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    text = report(doc)
    args.out.with_suffix(".txt").write_text(text + "\n")
    print(text)
    return 1 if any("error" in r for r in doc["modes"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
