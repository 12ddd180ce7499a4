"""Agent transcripts for the run page: what each agent was told, said, called and was allowed.

Read from the log alone: an agent node's model steps (``…/model@n``, whose output holds the
request and the response), its tool calls (``…/<tool>@<step>.<call>``), approval questions
and chat replies (``…/approval@n``, ``…/reply@n``) and the agent's own completion. Every
text is shown autoescaped by the template.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from wfapp.models import Event
from wfapp.web import queries
from wfapp.web.readable import answer_summary, preview

_MODEL_STEP_PATH = re.compile(r"/model@[^/]+$")
_TOOL_STEP = re.compile(r"^(?P<tool>[^/@]+)@(?P<step>\d+)\.(?P<call>\d+)(r\d+)?$")


@dataclass
class Line:
    """One entry of a transcript."""

    seq: int
    role: str  # instruction, user, assistant, call, result, retry, approval, answer, output, transfer, error
    text: str
    detail: str = ""  # arguments or a result as JSON
    who: str = ""


@dataclass
class Transcript:
    """One agent execution's conversation."""

    path: str
    agent: str
    model: str = ""
    lines: list[Line] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    status: str = "running"  # running, thinking, waiting, completed, failed
    instruction: str = ""
    thinking: str = ""  # the path of the model step in flight ("" when none)
    live: str = ""  # that step's text so far, as it streamed to this page (never stored)

    @property
    def dom_id(self) -> str:
        return dom_id(self.path)


def dom_id(path: str) -> str:
    """The HTML id of an agent execution's transcript."""
    return "transcript-" + re.sub(r"[^A-Za-z0-9_-]", "-", path)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


class _Reader:
    """Folds one agent's events, in log order, into its transcript."""

    def __init__(self, path: str) -> None:
        self.transcript = Transcript(path, path.rsplit("/", 1)[-1].split("@")[0])
        self.calls: dict[int, list[dict[str, Any]]] = {}  # model step number -> its tool calls
        self.shown_results: set[str] = set()  # tool call ids whose result a tool step showed
        self.steps = 0

    def add(self, event: Mapping[str, Any]) -> None:
        path, kind, data, seq = event["node_path"], event["kind"], event["data"] or {}, event["seq"]
        t = self.transcript
        if path == t.path:
            if kind == "completed" and "output" in data:
                t.lines.append(_output_line(seq, data["output"]))
                t.status = "completed"
            elif kind == "error":
                t.lines.append(Line(seq, "error", _error(data)))
                t.status = "failed"
            elif kind == "started":
                t.status = "running"
            return
        child = path[len(t.path) + 1 :]
        if child.startswith("model@"):
            if kind == "started":
                t.status, t.thinking = "thinking", path
            elif kind == "completed":
                self._model_step(seq, data.get("output") or {})
                t.status, t.thinking = "running", ""
            elif kind == "error":
                t.lines.append(Line(seq, "error", _error(data)))
                t.thinking = ""
        elif child.startswith("approval@"):
            self._approval(seq, kind, data, event["author"])
        elif child.startswith("reply@"):
            if kind == "interrupt":
                t.status = "waiting"
            elif kind == "answer":
                answer = data.get("answer") or {}
                who = str(answer.get("actor") or event["author"] or "")
                value = answer.get("value")
                t.lines.append(
                    Line(seq, "user", str(value) if value else "(ended the conversation)", who=who)
                )
        elif (found := _TOOL_STEP.match(child)) is not None:
            self._tool_step(seq, kind, data, found)

    def _model_step(self, seq: int, step: dict[str, Any]) -> None:
        t = self.transcript
        self.steps += 1
        request, response = step.get("request") or {}, step.get("response") or {}
        instruction = request.get("instructions") or ""
        if instruction and instruction != t.instruction:
            t.instruction = instruction
            t.lines.append(Line(seq, "instruction", instruction))
        for part in request.get("parts") or []:
            kind = part.get("part_kind")
            if kind == "user-prompt":
                t.lines.append(Line(seq, "user", _text(part.get("content"))))
            elif kind == "tool-return" and part.get("tool_call_id") not in self.shown_results:
                role = "retry" if part.get("outcome") == "retried" else "result"
                t.lines.append(Line(seq, role, f"{part.get('tool_name')}: {_text(part.get('content'))}"))
            elif kind in ("retry-prompt", "retry-feedback"):
                t.lines.append(Line(seq, "retry", _text(part.get("content"))))
        calls = []
        for part in response.get("parts") or []:
            kind = part.get("part_kind")
            if kind == "text" and part.get("content"):
                t.lines.append(Line(seq, "assistant", str(part["content"])))
            elif kind == "tool-call":
                calls.append(part)
                arguments = part.get("args")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        pass
                t.lines.append(Line(seq, "call", str(part.get("tool_name")), _json(arguments)))
        self.calls[self.steps] = calls
        t.model = str(response.get("model_name") or t.model)
        usage = response.get("usage") or {}
        t.input_tokens += int(usage.get("input_tokens") or 0)
        t.output_tokens += int(usage.get("output_tokens") or 0)

    def _tool_step(self, seq: int, kind: str, data: dict[str, Any], found: re.Match[str]) -> None:
        tool = found.group("tool")
        calls = self.calls.get(int(found.group("step"))) or []
        number = int(found.group("call"))
        if number <= len(calls):
            self.shown_results.add(str(calls[number - 1].get("tool_call_id")))
        if kind == "completed":
            output = data.get("output") or {}
            if "retry" in output:
                self.transcript.lines.append(Line(seq, "retry", f"{tool}: {output['retry']}"))
            else:
                self.transcript.lines.append(Line(seq, "result", tool, _text(output.get("result"))))
        elif kind == "error":
            self.transcript.lines.append(Line(seq, "error", f"{tool}: {_error(data)}"))

    def _approval(self, seq: int, kind: str, data: dict[str, Any], author: str) -> None:
        t = self.transcript
        if kind == "interrupt":
            payload = (data.get("interrupt") or {}).get("payload") or {}
            t.lines.append(
                Line(
                    seq,
                    "approval",
                    f"Asked to approve {payload.get('tool')}",
                    _json(payload.get("arguments")),
                )
            )
            t.status = "waiting"
        elif kind == "answer":
            answer = data.get("answer") or {}
            value = answer.get("value")
            who = str(answer.get("actor") or author or "")
            edited = value.get("arguments") if isinstance(value, dict) and value.get("approved") else None
            t.lines.append(
                Line(seq, "answer", answer_summary(value), "" if edited is None else _json(edited), who)
            )
            t.status = "running"


def _output_line(seq: int, output: Any) -> Line:
    """An agent's output; an agent that handed the conversation on (``engine.agents.Transfer``) says to whom.
    A handed-to agent's output is recorded inside ``{"handoff_result": {"answer" | "transfer": ...}}``."""
    handed = (
        output.get("handoff_result")
        if isinstance(output, dict) and set(output) == {"handoff_result"}
        else None
    )
    if isinstance(handed, dict):
        output = handed["transfer"] if "transfer" in handed else handed.get("answer")
    if isinstance(output, dict) and set(output) == {"transfer_to_agent", "messages"}:
        return Line(seq, "transfer", f"Handed the conversation to {output['transfer_to_agent']}")
    return Line(seq, "output", _text(output))


def _error(data: dict[str, Any]) -> str:
    error = data.get("error") or {}
    return preview(f"{error.get('type', 'Error')}: {error.get('message', '')}", 500)


def model_steps(paths: list[str]) -> set[str]:
    """The model steps among ``paths``."""
    return {path for path in paths if _MODEL_STEP_PATH.search(path)}


def agent_paths(status: list[tuple[str, str]]) -> list[str]:
    """The agent executions of a run, in the order they first asked a model.

    ``status`` is ``queries.status_rows``: ``(kind, node_path)`` of the run's started,
    completed, interrupt and error events, which the run page reads anyway. A model step
    starts (a run someone can watch) or is one ``completed`` event (``engine.Context.step``).
    """
    seen: dict[str, None] = {}
    for kind, path in status:
        if kind in ("started", "completed") and _MODEL_STEP_PATH.search(path):
            seen.setdefault(path.rsplit("/", 1)[0], None)
    return list(seen)


def transcripts(
    session_id: str,
    status: list[tuple[str, str]] | None = None,
    live: Mapping[str, str] | None = None,
) -> list[Transcript]:
    """Every agent's transcript in a run: one query, none for a run without agents.

    ``live`` is the text models streamed so far, by model step path (what a page's socket heard).
    """
    paths = agent_paths(queries.status_rows(session_id) if status is None else status)
    if not paths:
        return []
    wanted = Q()
    for path in paths:
        wanted |= Q(node_path=path) | Q(node_path__startswith=path + "/")
    events = (
        Event.objects.filter(session_id=session_id)
        .filter(wanted)
        .order_by("seq")
        .values("seq", "kind", "node_path", "author", "data")
    )
    readers = {path: _Reader(path) for path in paths}
    depth = {path: path.count("/") for path in paths}
    for event in events:
        node_path = event["node_path"]
        owner = node_path if node_path in readers else node_path.rsplit("/", 1)[0]
        reader = readers.get(owner)
        if reader is not None and node_path.count("/") <= depth[owner] + 1:
            reader.add(event)
    found = [reader.transcript for reader in readers.values()]
    for transcript in found:
        transcript.live = (live or {}).get(transcript.thinking, "") if transcript.thinking else ""
    return found
