"""No frame a client sends can crash a live socket: malformed frames are ignored, the socket stays open.

Property-based (hypothesis) over every consumer: frames that are not JSON, JSON of the wrong
shape, hellos whose positions are of the wrong type, negative, past 2^63, floats, infinities,
digit strings of other scripts, deep nesting, oversized frames and binary frames. After each,
the socket still answers a doorbell (a crashed consumer would be closed with 1011).
"""

from __future__ import annotations

import json
from typing import Any

from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.web.test_consumers import olga, socket, start
from wfapp.models import Session
from wfapp.store import doorbell

__all__ = ["olga"]  # the fixture

BEYOND = 2**63
POSITIONS = ("last_seq", "watermark")

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=BEYOND - 2, max_value=2**80),
    st.integers(max_value=-1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(alphabet=st.characters(categories=["Nd"]), min_size=1, max_size=25),  # ١٢٣, ๑๒, 12...
    st.just("9" * 30),
)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
hellos = st.fixed_dictionaries(
    {"type": st.just("hello")},
    optional={
        "last_seq": numbers,
        "watermark": numbers,
        "open": st.one_of(st.lists(numbers, max_size=5), json_values),
        "expand": json_values,
        "reconnect": json_values,
        "rendered_at": st.one_of(
            st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
            st.datetimes().map(lambda d: d.isoformat()),  # no offset
            st.text(max_size=40),
            json_values,
        ),
    },
)
frames = st.one_of(
    hellos.map(json.dumps),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4).map(json.dumps),
    json_values.map(json.dumps),
    st.text(max_size=300),
    st.integers(min_value=1, max_value=3000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(min_value=4097, max_value=70_000).map(
        lambda size: '{"type": "hello", "p": "' + "x" * size + '"}'
    ),
    st.binary(max_size=64),
)


async def _still_serves(comm: WebsocketCommunicator, run: str, last_seq: int) -> None:
    """The socket hears a doorbell after its hello: it is open and its consumer alive."""
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": last_seq}))
    await doorbell.ring(run, last_seq, runs=True, inbox=True)
    frame = await comm.receive_output(timeout=10)
    assert frame["type"] == "websocket.send", frame


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=frames, page=st.sampled_from(["nav", "inbox", "runs", "run"]))
@example(frame=json.dumps({"type": "hello", "last_seq": BEYOND}), page="run")
@example(frame=json.dumps({"type": "hello", "open": [BEYOND + 1]}), page="run")
@example(frame=json.dumps({"type": "hello", "watermark": 2**64}), page="inbox")
@example(frame='{"type": "hello", "last_seq": 1e999}', page="run")
@example(frame=json.dumps({"type": "hello", "last_seq": "١٢"}), page="run")
@example(frame=json.dumps({"type": "hello", "rendered_at": "0001-01-01T00:00:00+14:00"}), page="inbox")
@example(frame="[" * 3000 + "]" * 3000, page="nav")
@example(frame=b"\x00binary", page="run")
async def test_no_frame_crashes_a_live_socket(olga: User, frame: Any, page: str) -> None:
    run = await start()
    last_seq = (await Session.objects.aget(pk=run)).last_seq
    path = {"nav": "/ws/nav/", "inbox": "/ws/inbox/", "runs": "/ws/runs/", "run": f"/ws/runs/{run}/"}[page]
    comm = await socket(path, olga)
    assert (await comm.connect())[0]
    key = "bytes" if isinstance(frame, bytes) else "text"
    await comm.send_input({"type": "websocket.receive", key: frame})  # empty frames too
    await _still_serves(comm, run, last_seq)
    await comm.disconnect()


async def test_a_socket_url_with_a_position_past_2_63_is_served_from_the_start(olga: User) -> None:
    run = await start()
    comm = await socket(f"/ws/runs/{run}/?after={BEYOND}", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))
    frame = await comm.receive_output(timeout=10)
    assert frame["type"] == "websocket.send" and 'id="event-1"' in frame["text"]
    await comm.disconnect()
