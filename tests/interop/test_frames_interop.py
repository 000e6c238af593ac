"""Our frame codec against the real Hocuspocus 3.4.4 encoders and decoders (non-ASCII included)."""

from __future__ import annotations

import base64
import uuid

import pytest

from elynav_nb.docs.live import frames
from tests.interop.conftest import NodeRunner

pytestmark = pytest.mark.interop

ROOM = str(uuid.UUID("5b3c1f0e-8a2d-4c6b-9f1e-2d3c4b5a6978"))
TOKEN = "jeton-é🔑"
STATELESS = "héllo ✓ 日本"
REASON = "refusé 🚫"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _bytes(text: str) -> bytes:
    return base64.b64decode(text)


@pytest.fixture(scope="module")
def produced(node_peer: NodeRunner) -> dict:
    return node_peer(
        "frames.mjs",
        {
            "mode": "produce",
            "document_name": ROOM,
            "token": TOKEN,
            "stateless": STATELESS,
            "reason": REASON,
            "awareness_name": "Élodie",
        },
    )


def test_provider_frames_decode(produced: dict) -> None:
    messages = [frames.decode_message(_bytes(frame)) for frame in produced["provider"]]
    assert messages[0] == frames.AuthToken(ROOM, TOKEN)
    assert messages[1] == frames.SyncStep1(ROOM, b"\x00")
    kinds = [type(message).__name__ for message in messages]
    assert "SyncUpdate" in kinds and "AwarenessUpdate" in kinds
    assert messages[-1] == frames.Stateless(ROOM, STATELESS)
    awareness = [m for m in messages if isinstance(m, frames.AwarenessUpdate)]
    assert any("Élodie".encode() in m.update for m in awareness)
    for frame in produced["provider"]:  # byte-exact both ways
        assert frames.encode_message(frames.decode_message(_bytes(frame))) == _bytes(frame)


def test_server_frames_decode(produced: dict) -> None:
    server = {label: frames.decode_message(_bytes(frame)) for label, frame in produced["server"].items()}
    assert server["authenticated_read_write"] == frames.Authenticated(ROOM, "read-write")
    assert server["authenticated_readonly"] == frames.Authenticated(ROOM, "readonly")
    assert server["authenticated_readonly"].read_only
    assert server["permission_denied"] == frames.PermissionDenied(ROOM, REASON)
    assert server["token_request"] == frames.TokenRequest(ROOM)
    assert server["sync_status_applied"] == frames.SyncStatus(ROOM, True)
    assert server["sync_status_rejected"] == frames.SyncStatus(ROOM, False)
    assert server["close_reset"] == frames.Close(ROOM, "Reset Connection")
    assert server["close_reason"] == frames.Close(ROOM, REASON)
    assert server["stateless"] == frames.Stateless(ROOM, STATELESS)
    assert server["sync_step_1"] == frames.SyncStep1(ROOM, _bytes(produced["room_state_vector"]))
    assert server["sync_reply_step_1"] == frames.SyncStep1(
        ROOM, _bytes(produced["room_state_vector"]), reply=True
    )
    assert server["update"] == frames.SyncUpdate(ROOM, _bytes(produced["room_update"]))
    assert server["query_awareness"] == frames.QueryAwareness(ROOM)
    for label, frame in produced["server"].items():
        assert frames.encode_message(server[label]) == _bytes(frame), label


def test_node_decodes_our_frames(node_peer: NodeRunner, produced: dict) -> None:
    room_update = _bytes(produced["room_update"])
    ours: list[frames.Message] = [
        frames.AuthToken(ROOM, TOKEN),
        frames.AuthToken(ROOM, "", provider_version="4.7.0"),
        frames.SyncStep1(ROOM, b"\x00"),
        frames.SyncUpdate(ROOM, room_update),
        frames.Stateless(ROOM, STATELESS),
        frames.BroadcastStateless(ROOM, STATELESS),
        frames.Close(ROOM),
        frames.QueryAwareness(ROOM),
        # server to client, also fed to a real HocuspocusProvider (indices 8..)
        frames.Authenticated(ROOM, "read-write"),
        frames.Stateless(ROOM, STATELESS),
        frames.SyncStep2(ROOM, room_update),
        frames.SyncStatus(ROOM, True),
        frames.PermissionDenied(ROOM, REASON),
        frames.Close(ROOM, REASON),
    ]
    result = node_peer(
        "frames.mjs",
        {
            "mode": "consume",
            "frames": [_b64(frames.encode_message(message)) for message in ours],
            "feed_to_provider": list(range(8, len(ours))),
        },
    )
    decoded = result["decoded"]
    assert all(entry["document_name"] == ROOM and entry["trailing"] == 0 for entry in decoded)
    assert decoded[0]["type"] == 2 and decoded[0]["auth_type"] == 0 and decoded[0]["token"] == TOKEN
    assert decoded[1]["token"] == "" and decoded[1]["provider_version"] == "4.7.0"
    assert decoded[2]["sync_type"] == 0 and _bytes(decoded[2]["data"]) == b"\x00"
    assert decoded[3]["sync_type"] == 2 and _bytes(decoded[3]["data"]) == room_update
    assert decoded[4]["type"] == 5 and decoded[4]["payload"] == STATELESS
    assert decoded[5]["type"] == 6 and decoded[5]["payload"] == STATELESS
    assert decoded[6]["type"] == 7 and "reason" not in decoded[6]
    assert decoded[7]["type"] == 3
    assert decoded[8]["scope"] == "read-write"
    assert decoded[12]["reason"] == REASON
    assert decoded[13]["reason"] == REASON

    events = result["provider_events"]
    assert {"event": "authenticated", "scope": "read-write"} in events
    assert {"event": "stateless", "payload": STATELESS} in events
    assert {"event": "authenticationFailed", "reason": REASON} in events
    assert {"event": "close", "reason": REASON} in events
    assert {"event": "synced", "state": True} in events
    assert {"event": "document", "text": "état"} in events
