"""Work done once for the sockets of this process's event loop that ask for it at the same time.

A doorbell reaches every open page at once: a hundred sockets ask for the same render in the
same instant, before any of them has it (``shared.peek`` misses for all). Handing each to a
thread would queue a hundred thread hops behind the pool's few threads. ``once`` lets the first
socket do the work (in a thread) while the others await its result on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

_flights: dict[Hashable, asyncio.Future[Any]] = {}


async def once[T](key: Hashable, work: Callable[[], Awaitable[T]]) -> T:
    """``await work()`` for the first caller of ``key``; callers meanwhile get the same result
    (or exception). A caller cancelled while waiting does not cancel the work for the others."""
    flight = _flights.get(key)
    if flight is not None:
        return await asyncio.shield(flight)
    flight = asyncio.get_running_loop().create_future()
    _flights[key] = flight
    try:
        value = await work()
    except BaseException as error:
        if isinstance(error, asyncio.CancelledError):
            flight.cancel()
        else:
            flight.set_exception(error)
            flight.exception()  # retrieved: no "never retrieved" warning when nobody waited
        raise
    else:
        flight.set_result(value)
        return value
    finally:
        _flights.pop(key, None)
