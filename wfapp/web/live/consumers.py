"""Websocket consumers for live pages: thin relays from doorbells to presenter fragments.

Each consumer checks the user at connect (anonymous users and unknown runs are refused), joins
its groups, and on doorbells asks `presenter` what this page has not seen yet. Doorbells carry no
content: a doorbell, like every other message, is only noted in the socket's ``Lane``, which does
the work noted one piece at a time (rings heard meanwhile fold in), so fragments go out in order
and a busy socket's queue never fills with rings it would act on one by one.

A page's position (its last seq, its watermark) comes with its hello: until the hello is
handled, doorbells are ignored (the hello reads everything up to then), and a position only ever
moves forward, so nothing is sent twice or out of order. Frames are read by `frames`: a
malformed one is ignored and the socket stays open. A socket that closes while an update is on
its way is normal (a tab was closed): it is logged at debug level only. A socket stays open only
while its login session, its user and their right to the page do (``access``: checked before
each update and every few seconds; closed with 4401 otherwise).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Hashable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils import timezone

from wfapp.human import assignment
from wfapp.human.permissions import may_answer_some
from wfapp.store.doorbell import INBOX_GROUP, RUNS_GROUP, rung_counts, session_group
from wfapp.web import counts, presenter, queries, run_search, viewer_zone
from wfapp.web.live import access, behind, fanout, flight, frames
from wfapp.web.live.lane import Lane
from wfapp.web.live.logout import LOGGED_OUT, login_group
from wfapp.web.live.model_text import LiveText, append_fragment
from wfapp.web.live.threads import reads
from wfapp.web.run_search import BadSearch, RunSearch

logger = logging.getLogger(__name__)


MAX_OPEN = 200  # question cards a run page may say it shows


def _query(scope: dict[str, Any]) -> dict[str, str]:
    raw = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return {key: values[-1][:200] for key, values in raw.items() if values}


def _too_large(html: str) -> bool:
    """Whether one message of this text is more than the server sends (``serve`` passes the limit)."""
    limit = int(settings.DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE)
    return limit > 0 and len(html) * 4 > limit and len(html.encode()) > limit


def _url_position(scope: dict[str, Any], name: str) -> int:
    """A position from the socket's URL; 0 (the start) when absent or malformed."""
    try:
        return frames.position(_query(scope).get(name, "0"), name)
    except frames.BadFrame:
        return 0


class LiveConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels ships no types
    """The common part: authentication, groups, the hello message, the pending-count badge."""

    greeted = False  # whether the page's hello was handled
    hailed = False  # whether it came: doorbells before it are ignored (the hello reads up to then)
    gone = False  # the socket closed (or is closing): nothing more is sent

    def groups_for(self) -> list[str]:
        return [INBOX_GROUP]

    def folds(self, session_id: str) -> str:
        """What a doorbell of ``session_id`` folds with in the lane: the latest ring per key is acted on."""
        return session_id

    async def authorize(self) -> bool:
        return True

    def still_allowed(self, user: Any) -> bool:
        """Whether ``user`` holds the right this page needs (synchronous: it may query)."""
        return True

    def allowed_on(self) -> Hashable:
        """What ``still_allowed`` asks about beyond the user (a run, a question): pages of the
        same kind on the same thing share the check."""
        return ""

    async def dispatch(self, message: dict[str, Any]) -> None:
        """The message's handler, on the event loop. Channels first closes the old database
        connections of the one thread Django's synchronous code shares (a hop to that thread per
        message: with many pages open, thousands a second queued behind the runtime's and the
        views' work); these consumers read only through ``threads.reads``, whose threads tidy
        their own connections, so they skip it."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        # Before any subclass's connect reads filters: the viewer's zone, for every update.
        viewer_zone.activate_for(self.scope.get("cookies") or {})
        await super().websocket_connect(message)

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await self.authorize():
            await self.close()
            return
        self.user = user
        self.heard: deque[Any] = deque(maxlen=16)  # the last doorbells acted on
        self.lane = Lane(self.ring, self.caught_behind, self.close_failed)
        self.joined = self.groups_for()
        session_key = getattr(self.scope.get("session"), "session_key", None)
        if session_key:
            self.joined.append(login_group(session_key))
        self.guard = access.Guard(
            user,
            access.for_session(user, session_key),
            self.still_allowed,
            who_key=(session_key, user.pk) if session_key else None,
            allowed_key=(type(self).__name__, self.allowed_on()),
        )
        await self.guard.opened()
        await self.join_groups()
        self.rings = behind.Heard()
        self.rings.behind_here(self.joined, rung_counts())  # the page's render read those
        self.checks = behind.start_checks(self.channel_layer, self.channel_name, self.close_behind)
        await self.accept()
        self.watching = asyncio.create_task(self.guard.watch(self.lost_access))

    async def join_groups(self) -> None:
        for group in self.joined:
            await self.channel_layer.group_add(group, self.channel_name)

    async def disconnect(self, code: int) -> None:
        self.gone = True
        await behind.stop_checks(getattr(self, "checks", None))
        lane = getattr(self, "lane", None)
        if lane is not None:
            await lane.stop()
        watching = getattr(self, "watching", None)
        if watching is not None and watching is not asyncio.current_task():
            watching.cancel()
        await self.leave_groups()

    async def lost_access(self) -> None:
        """The session ended, or the user lost the page: stop at once and close (4401)."""
        self.gone = True
        await behind.stop_checks(getattr(self, "checks", None))
        await self.leave_groups()
        await self.close(code=LOGGED_OUT)

    async def leave_groups(self) -> None:
        joined, self.joined = getattr(self, "joined", []), []
        for group in joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.gone:
            return
        try:
            message = frames.parse(text_data)
            if message.get("type") == "hello":
                self.read_hello(message)
        except frames.BadFrame as error:
            frames.refused(type(self).__name__, error)
            return
        if message.get("type") == "hello":

            async def greet() -> None:
                await self.hello(message)
                self.greeted = True

            self.hailed = True  # the rings from now on are acted on after the hello
            self.lane.then(greet)
        else:
            self.lane.then(lambda: self.command(message))

    def read_hello(self, message: dict[str, Any]) -> None:
        """Take the page's positions from its hello (each only moves forward), or ``BadFrame``."""

    async def command(self, message: dict[str, Any]) -> None:
        """A page's request other than hello; pages without any ignore it."""

    async def hello(self, message: dict[str, Any]) -> None:
        await self.push(await reads(presenter.badge_fragment)(self.user))

    async def wfapp_doorbell(self, event: dict[str, Any]) -> None:
        missed = self.rings.missed(event, self.joined)  # counted before the hello too
        if not self.hailed or self.gone:
            return  # the hello, still to come, reads everything up to then
        ring = event.get("ring")
        if ring is not None and ring in self.heard:
            return  # the same ring through another of this page's groups
        self.heard.append(ring)
        if missed:
            self.lane.behind()  # it reads everything up to now, this doorbell's change too
            return
        seq = event.get("seq")
        session_id = str(event.get("session_id", ""))
        self.lane.ring(self.folds(session_id), session_id, seq if isinstance(seq, int) else 0)

    async def wfapp_check(self, event: dict[str, Any]) -> None:
        """The socket's own periodic check (``behind``): back into its groups, and caught up if
        doorbells were dropped on their way to it."""
        if self.gone:
            return
        await self.join_groups()
        rung = event.get("rung")
        if self.rings.behind_here(self.joined, rung if isinstance(rung, dict) else {}) and self.hailed:
            self.lane.behind()

    async def caught_behind(self) -> None:
        """Bring the page up to date after doorbells were lost on their way to this socket."""
        await self.ring("", 0)

    async def close_failed(self) -> None:
        """An update failed (logged by the lane): close as a server error; the page reconnects."""
        await self.close_behind(1011)

    async def close_behind(self, code: int) -> None:
        """Too far behind to catch up in place: close; the page reconnects and says where it was."""
        self.gone = True
        await self.leave_groups()
        await self.close(code=code)

    async def wfapp_logout(self, event: dict[str, Any]) -> None:
        """The session this socket was opened with logged out: stop at once and close."""
        await self.lost_access()

    async def ring(self, session_id: str, seq: int) -> None:
        await self.push(await self.badge((session_id, seq)))

    async def badge(self, doorbell: tuple[str, int]) -> str:
        """The pending-count badge for a doorbell: counted and rendered once for every page that
        heard it (``counts``), off the one thread sync code shares; picked up here when another
        page had it rendered."""
        known = presenter.known_badge(self.user, doorbell)
        if known is not None:
            return known
        render = reads(presenter.badge_fragment)
        found, scope = counts.known_scope(self.user)
        if not found or scope is None:
            return await render(self.user, doorbell)
        user = self.user  # the badge reads the same for everyone of the scope
        return await flight.once(("badge", doorbell, scope), lambda: render(user, doorbell))

    async def push(self, html: str) -> None:
        if not html.strip() or self.gone:
            return
        if not await self.guard.check():
            await self.lost_access()
            return
        self.user = self.guard.user  # as just read: later updates see its rights as they are now
        if _too_large(html):
            # Daphne would refuse to send it and close the socket (1011): the page reloads it instead.
            logger.warning(
                "%s: a live update of %d bytes is over the %d-byte websocket message limit; not sent",
                type(self).__name__,
                len(html.encode()),
                settings.DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE,
            )
            return
        try:
            await self.send(text_data=html)
        except Disconnected:
            # The page went away (a tab closed) while this update was on its way: normal.
            logger.debug("%s: the socket closed before a live update was sent", type(self).__name__)
            self.gone = True


class NavConsumer(LiveConsumer):
    """Pages without live content of their own: just the pending count."""

    def folds(self, session_id: str) -> str:
        return ""  # every ring asks the same: the count now


class InboxConsumer(LiveConsumer):
    """The inbox: new questions appear, answered ones close; a reconnect re-renders the list."""

    def still_allowed(self, user: Any) -> bool:
        return may_answer_some(user)

    async def connect(self) -> None:
        query = _query(self.scope)
        self.filters = {
            "workflow": query.get("workflow", ""),
            "q": query.get("q", ""),
            "newest": query.get("sort") == "newest",
            "due": query.get("sort") == "due",
            "by": query.get("sort", "") if query.get("sort") in queries.LIST_SORTS else "",
            "tab": query.get("tab", "all") if query.get("tab") in assignment.TABS else "all",
        }
        chosen = query.get("view") or (self.scope.get("cookies") or {}).get("wfapp_inbox_view", "")
        self.view = chosen if chosen in ("cards", "list") else "cards"
        self.watermark = _url_position(self.scope, "watermark")
        self.sent: set[int] = set()
        self.since: datetime | None = None  # when the page was rendered (from its hello)
        self.seen_seq: dict[str, int] = {}  # per run: the doorbell seq this page is up to
        await super().connect()

    def read_hello(self, message: dict[str, Any]) -> None:
        watermark = frames.position(message.get("watermark", 0), "watermark")
        since = frames.moment(message.get("rendered_at"))
        self.watermark = max(self.watermark, watermark)
        if since is not None and (self.since is None or since > self.since):
            self.since = since

    async def hello(self, message: dict[str, Any]) -> None:
        if message.get("reconnect") is True:
            await self.caught_behind()
            return
        if self.greeted:
            return  # a page says hello once per socket: a repeat moves positions, sends nothing again
        html, sent = await reads(presenter.inbox_update)(
            self.user, self.filters, self.watermark, self.sent, closed_since=self.since
        )
        self.sent |= sent
        await self.push(html)

    async def caught_behind(self) -> None:
        """The whole list again, as after a reconnect."""
        self.since = timezone.now()
        latest = await reads(queries.interrupt_watermark)()
        self.watermark = max(self.watermark, latest)
        self.sent.clear()
        await self.push(
            await reads(presenter.inbox_list)(self.user, self.filters, self.watermark, view=self.view)
        )

    async def ring(self, session_id: str, seq: int) -> None:
        # Rendered once per view and doorbell (``fanout``), off the one thread sync code shares;
        # picked up here, without a thread, when another socket of the view rendered it.
        args = (self.user, self.filters, self.watermark, self.sent)
        kwargs: dict[str, Any] = {
            "answered_after": self.seen_seq.get(session_id, 0),
            "closed_since": None if session_id in self.seen_seq else self.since,
            "doorbell": (session_id, seq),
        }
        known = fanout.known_inbox_update(*args, **kwargs)
        if known is None:
            known = await fanout.inbox_update_async(*args, **kwargs)
        html, sent = known
        self.seen_seq[session_id] = max(seq, self.seen_seq.get(session_id, 0))
        self.sent |= sent
        await self.push(html)


class RunsConsumer(LiveConsumer):
    """The runs list: rows change status live; runs started since the page was rendered that
    match its filters are prepended, wherever they were started (the web, the CLI, a worker)."""

    def groups_for(self) -> list[str]:
        return [RUNS_GROUP, INBOX_GROUP]

    async def connect(self) -> None:
        query = _query(self.scope)
        try:
            self.search: RunSearch | None = run_search.parse(query)
        except BadSearch:
            self.search = None  # the page shows no runs: none are inserted either
        self.first_page = not query.get("after")
        self.since = timezone.now()  # when the page was rendered, once its hello says so
        self.inserted: set[str] = set()
        await super().connect()

    def read_hello(self, message: dict[str, Any]) -> None:
        since = frames.moment(message.get("rendered_at"))
        if since is not None and not self.hailed:
            self.since = min(since, self.since)

    async def caught_behind(self) -> None:
        """The list has no catch-up of its own: the page loads again."""
        await self.close_behind(behind.RELOAD)

    async def ring(self, session_id: str, seq: int) -> None:
        since = self.since if self.first_page and session_id not in self.inserted else None
        html, inserted = await reads(presenter.runs_update)(self.user, session_id, self.search, since)
        if inserted:
            self.inserted.add(session_id)
        await self.push(html + await self.badge((session_id, seq)))


class QuestionConsumer(LiveConsumer):
    """One question's own page: its card closes once the question stops pending, whoever closed
    it; until then each commit to its run re-renders who holds it and who approved it."""

    closed = False  # the closed card went out: nothing more to send but the badge
    sent = ""  # the last update sent: the same again is not re-sent (it would wipe a half-typed name)

    async def authorize(self) -> bool:
        pk = int(self.scope["url_route"]["kwargs"]["pk"])
        row = await reads(queries.visible_interrupt)(self.scope["user"], pk)
        if row is None:
            return False
        self.pk, self.session_id = row.pk, row.session_id
        return True

    def groups_for(self) -> list[str]:
        return [session_group(self.session_id), INBOX_GROUP]

    def folds(self, session_id: str) -> str:
        return session_id if session_id == self.session_id else ""  # others' rings: the count only

    def still_allowed(self, user: Any) -> bool:
        return queries.may_see_interrupt(user, self.pk)

    def allowed_on(self) -> Hashable:
        return self.pk

    async def hello(self, message: dict[str, Any]) -> None:
        await self.close_card()  # it may have closed between the page's render and this socket
        await super().hello(message)

    async def ring(self, session_id: str, seq: int) -> None:
        if session_id == self.session_id:
            await self.close_card()
        await super().ring(session_id, seq)

    async def caught_behind(self) -> None:
        await self.ring(self.session_id, 0)

    async def close_card(self) -> None:
        if self.closed:
            return
        html, self.closed = await reads(presenter.question_update)(self.user, self.pk)
        if html != self.sent:
            self.sent = html
            await self.push(html)


class RunConsumer(LiveConsumer):
    """One run: what the page has not seen, in order, once; a reconnect says where it was."""

    async def authorize(self) -> bool:
        self.showing: set[int] = set()
        self.expanded: frozenset[str] = frozenset()
        self.session_id = str(self.scope["url_route"]["kwargs"]["session_id"])
        self.last_seq = _url_position(self.scope, "after")
        self.live = LiveText()
        user = self.scope.get("user")
        return await reads(queries.get_run)(user, self.session_id) is not None

    def groups_for(self) -> list[str]:
        return [session_group(self.session_id), INBOX_GROUP]

    def folds(self, session_id: str) -> str:
        return session_id if session_id == self.session_id else ""  # others' rings: the count only

    def still_allowed(self, user: Any) -> bool:
        return queries.may_view_run(user, self.session_id)

    def allowed_on(self) -> Hashable:
        return self.session_id

    def read_hello(self, message: dict[str, Any]) -> None:
        last_seq = frames.position(message.get("last_seq", self.last_seq), "last_seq")
        shown = frames.positions(message.get("open", []), "open", MAX_OPEN)  # the open question cards
        self.last_seq = max(self.last_seq, last_seq)
        self.showing = shown - {0}
        self.expanded = presenter.expanded_nodes(message.get("expand"))

    async def hello(self, message: dict[str, Any]) -> None:
        await self.catch_up()
        await super().hello(message)

    async def command(self, message: dict[str, Any]) -> None:
        if message.get("type") == "graph":  # list all (or only the first) children of graph nodes
            self.expanded = presenter.expanded_nodes(message.get("expand"))
            await self.push(await reads(presenter.graph_fragment)(self.user, self.session_id, self.expanded))

    async def ring(self, session_id: str, seq: int) -> None:
        if session_id == self.session_id:
            await self.catch_up()
        await super().ring(session_id, seq)

    async def caught_behind(self) -> None:
        await self.ring(self.session_id, 0)  # from the page's last seq

    async def wfapp_note(self, event: dict[str, Any]) -> None:
        """A model's text as it streams (never stored): append it to the agent's live line, in
        the socket's turn (after the updates noted before it)."""
        self.lane.then(lambda: self.note(event))

    async def note(self, event: dict[str, Any]) -> None:
        note, path = event.get("note"), event.get("node_path")
        if self.gone or event.get("session_id") != self.session_id or not isinstance(path, str):
            return
        if not isinstance(note, dict) or note.get("kind") != "model_text":
            return
        offset, text = note.get("offset"), note.get("text")
        if isinstance(offset, bool) or not isinstance(offset, int) or not isinstance(text, str):
            return
        piece = self.live.add(path, max(offset, 0), text)
        if not self.greeted or piece == "":
            return  # before the hello, the text is kept for the hello's render
        if piece is not None:
            await self.push(append_fragment(path, piece))
        elif self.live.tried_at != self.last_seq:  # once per seq: the step may not be committed yet
            self.live.tried_at = self.last_seq
            html, streaming = await reads(presenter.transcripts_fragment)(self.session_id, self.live.texts)
            self.live.rendered(streaming)
            await self.push(html)

    async def catch_up(self) -> None:
        batch = queries.LIVE_BATCH
        while not self.gone:
            before = self.last_seq
            update = await reads(presenter.run_update)(
                self.session_id, self.user, before, self.showing, self.expanded, batch, self.live.texts
            )
            if batch > 1 and _too_large(update.html):
                batch //= 2  # a long backlog of large events: the same events, in smaller messages
                continue
            self.last_seq = update.last_seq
            self.showing = (self.showing | update.opened) - update.closed
            self.live.finished(update.finished)
            if update.streaming is not None:
                self.live.rendered(update.streaming)
            await self.push(update.html)
            if self.last_seq - before < batch:
                return
