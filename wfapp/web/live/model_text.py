"""The text models streamed to one run page, per model step, until the step is recorded.

The text arrives in notes (``wfapp.note``, never stored; see ``engine.Context.publish``), each
with the offset of its first character. A page shows it in the live line of the agent's
transcript (``<transcript id>-live``), which the transcripts render while a model step is in
flight. Once this socket has rendered that line, a note becomes an append to it; before, the
consumer renders the transcripts with the text so far. A gap (a page that joined mid-answer,
notes the channel dropped) shows as "…". The recorded response replaces it all when the step
completes.
"""

from __future__ import annotations

from django.utils.html import format_html

from wfapp.web.transcripts import dom_id

GAP = "…"
MAX_TEXT = 200_000  # characters kept per step; the recorded response shows the rest


class LiveText:
    """What this socket heard and showed of each model step in flight."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}  # model step path -> the text shown
        self.heard: dict[str, int] = {}  # model step path -> the offset heard up to
        self.shown: set[str] = set()  # the steps whose live line this socket rendered
        self.tried_at = -1  # the seq of the last render that looked for a live line

    def add(self, path: str, offset: int, text: str) -> str | None:
        """Take a note's text; return what to append to the page ('' nothing, None: render the line first)."""
        heard = self.heard.get(path, 0)
        if offset < heard:  # heard already (in part)
            text = text[heard - offset :]
            offset = heard
        shown = self.texts.get(path, "")
        if not text or len(shown) >= MAX_TEXT:
            return ""
        piece = (GAP if offset > heard else "") + text
        self.texts[path] = shown + piece
        self.heard[path] = offset + len(text)
        return piece if path in self.shown else None

    def rendered(self, steps: set[str]) -> None:
        """The transcripts were rendered with live lines for ``steps`` (and the text so far)."""
        self.shown = set(steps)

    def finished(self, steps: set[str]) -> None:
        """These steps were recorded: their text is in the transcript now."""
        for path in steps:
            self.texts.pop(path, None)
            self.heard.pop(path, None)
            self.shown.discard(path)


def append_fragment(step_path: str, piece: str) -> str:
    """The out-of-band swap that appends ``piece`` to the live line of the step's agent."""
    agent = step_path.rsplit("/", 1)[0]
    return format_html('<div hx-swap-oob="beforeend:#{}-live">{}</div>', dom_id(agent), piece)
