from __future__ import annotations

import random

import pytest

from elynav_nb.docs.live import frames
from elynav_nb.errors import ProtocolError

DOC = "doc"


@pytest.mark.parametrize(
    ("message", "hex_bytes"),
    [  # design note §1.3, verified against live frames
        (frames.AuthToken(DOC, ""), "03646f63020000"),
        (frames.AuthToken(DOC, "abc"), "03646f63020003616263"),
        (frames.Authenticated(DOC, "read-write"), "03646f6302020a726561642d7772697465"),
        (frames.Authenticated(DOC, "readonly"), "03646f63020208726561646f6e6c79"),
        (
            frames.PermissionDenied(DOC, "permission-denied"),
            "03646f630201117065726d697373696f6e2d64656e696564",
        ),
        (frames.SyncStep1(DOC, b"\x00"), "03646f6300000100"),
        (frames.SyncStep2(DOC, b"\x00\x00"), "03646f630001020000"),
        (frames.SyncStatus(DOC, True), "03646f630801"),
        (frames.SyncStatus(DOC, False), "03646f630800"),
        (frames.Close(DOC, "Reset Connection"), "03646f630710526573657420436f6e6e656374696f6e"),
        (frames.QueryAwareness(DOC), "03646f6303"),
        (frames.Ping(), "09"),
        (frames.Pong(), "0a"),
    ],
)
def test_reference_bytes(message: frames.Message, hex_bytes: str) -> None:
    assert frames.encode_message(message) == bytes.fromhex(hex_bytes)
    assert frames.decode_message(bytes.fromhex(hex_bytes)) == message


def test_var_uint() -> None:
    assert frames.encode_var_uint(300) == b"\xac\x02"
    for value in (0, 1, 127, 128, 2**21, 2**53 - 1):
        assert frames.ByteReader(frames.encode_var_uint(value)).read_var_uint() == value
    with pytest.raises(ValueError):
        frames.encode_var_uint(-1)


def test_var_string_counts_bytes() -> None:
    assert frames.encode_var_string("héllo") == b"\x06h\xc3\xa9llo"
    message = frames.AuthToken("é-🔑", "jeton é", provider_version="4.7.0")
    assert frames.decode_message(frames.encode_message(message)) == message


def test_all_other_messages_round_trip() -> None:
    for message in [
        frames.SyncUpdate(DOC, b"\x01\x02" * 1000),
        frames.SyncStep1(DOC, b"\x00", reply=True),
        frames.AwarenessUpdate(DOC, b"\x01\x02\x03"),
        frames.TokenRequest(DOC),
        frames.Stateless(DOC, "héllo"),
        frames.BroadcastStateless(DOC, "{}"),
        frames.Close(DOC),
    ]:
        assert frames.decode_message(frames.encode_message(message)) == message


def test_large_update_length_prefix() -> None:
    update = bytes(2 * 1024 * 1024)
    frame = frames.encode_message(frames.SyncStep2(DOC, update))
    assert frames.decode_message(frame) == frames.SyncStep2(DOC, update)


@pytest.mark.parametrize(
    "hex_bytes",
    [
        "",  # empty
        "03646f",  # name cut short
        "03646f63",  # no type
        "03646f6300",  # sync without sync type
        "03646f630002ff",  # update length beyond the frame
        "03646f630003020000",  # unknown sync type
        "03646f6363",  # unknown message type
        "03646f630203",  # unknown auth type
        "03646f63080100",  # trailing byte
        "02c32800000100",  # invalid UTF-8 in the name
        "ffffffffffffffffff7f",  # over-long varUint
    ],
)
def test_garbage_is_a_protocol_error(hex_bytes: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        frames.decode_message(bytes.fromhex(hex_bytes))
    assert caught.value.code == "PROTOCOL_ERROR"


def test_random_garbage_never_escapes_as_another_error() -> None:
    generator = random.Random(7)
    for _ in range(3000):
        data = bytes(generator.randrange(256) for _ in range(generator.randrange(1, 40)))
        try:
            frames.decode_message(data)
        except ProtocolError:
            pass


def test_text_frame_refused() -> None:
    with pytest.raises(ProtocolError):
        frames.decode_message("03646f63")  # type: ignore[arg-type]
