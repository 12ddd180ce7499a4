"""Daphne with a cap on the bytes of a request body, counted as they arrive.

Daphne reads a whole request body (into memory, or a temporary file past 100 KB) before the
ASGI application is called, so no middleware can refuse a body that is too large before it
was read to its end: an unauthenticated client could make every request cost its full size.
``CappedRequest`` counts the body in Twisted's own reading of it (``gotLength`` for a declared
``Content-Length``, ``handleContentChunk`` for every piece, chunked or not) and, as soon as the
count passes ``WFAPP_MAX_REQUEST_BYTES``, answers ``413`` itself, stops reading and closes the
connection; the application never sees the request. The answer size limits of the pages and
the API (``WFAPP_MAX_ANSWER_BYTES``) stay below this one and keep their own messages.

``Server`` is Daphne's, building this request class into its HTTP factory.
"""

from __future__ import annotations

import logging
from typing import Any

import daphne.server  # first: it installs Twisted's asyncio reactor
from daphne.http_protocol import HTTPFactory, WebRequest

logger = logging.getLogger(__name__)


class CappedRequest(WebRequest):  # type: ignore[misc]
    """A Daphne request that refuses a body over ``max_body`` bytes while it is being read."""

    max_body = 0  # set on the subclass ``capped`` makes

    _received = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        super().gotLength(length)
        if length is not None and length > self.max_body:
            self._refuse(f"declared {length} bytes")

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._received += len(data)
        if self._received > self.max_body:
            self._refuse(f"over {self._received} bytes so far")
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if not self._refused:  # a refused body that ended anyway is not handed to the application
            super().requestReceived(command, path, version)

    def _refuse(self, how: str) -> None:
        self._refused = True
        body = f"Request body too large: the limit is {self.max_body} bytes.\n".encode()
        head = (
            b"HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        transport = self.channel.transport
        peer = transport.getPeer()
        logger.warning(
            "refused a request body from %s (%s): the limit is %d bytes",
            getattr(peer, "host", peer),
            how,
            self.max_body,
        )
        transport.write(head + body)
        transport.pauseProducing()  # read no more of it
        transport.loseConnection()  # once the answer is written


def capped(max_body: int) -> type[CappedRequest]:
    """A ``CappedRequest`` class refusing bodies over ``max_body`` bytes."""
    return type("CappedRequest", (CappedRequest,), {"max_body": max_body})


class CappedHTTPFactory(HTTPFactory):  # type: ignore[misc]
    """Daphne's HTTP factory, its requests capped."""

    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.request_class = capped(server.max_request_bytes)

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = self.request_class
        return protocol


class Server(daphne.server.Server):  # type: ignore[misc]
    """Daphne's server with request bodies capped at ``max_request_bytes``."""

    def __init__(self, *args: Any, max_request_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_request_bytes = max_request_bytes

    # Daphne's ``run`` makes its HTTP factory itself (``self.http_factory = HTTPFactory(self)``)
    # and listens with it at once; this property is where ours takes its place.
    @property
    def http_factory(self) -> CappedHTTPFactory:
        return self._capped_factory

    @http_factory.setter
    def http_factory(self, _daphnes: HTTPFactory) -> None:
        self._capped_factory = CappedHTTPFactory(self)
