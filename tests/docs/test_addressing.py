from __future__ import annotations

import uuid

import pytest

from elynav_nb.docs.addressing import DocAddress, is_uuid_v4, normalize_instance_origin, parse_docs_url
from elynav_nb.errors import InstanceMismatch, InvalidInput

V4 = "5b3c1f0e-8a2d-4c6b-9f1e-2d3c4b5a6978"


def test_full_link() -> None:
    address = parse_docs_url(f"https://Docs.Example.org/docs/{V4.upper()}/")
    assert address == DocAddress("https://docs.example.org", V4)
    assert address.link == f"https://docs.example.org/docs/{V4}/"


@pytest.mark.parametrize(
    "link",
    [
        f"https://docs.example.org/docs/{V4}",
        f"https://docs.example.org:443/docs/{V4}/?tab=1#x",
        f"  https://docs.example.org/docs/{V4}/ ",
    ],
)
def test_link_variants(link: str) -> None:
    assert parse_docs_url(link) == DocAddress("https://docs.example.org", V4)


def test_local_http_port_kept() -> None:
    assert parse_docs_url(f"http://127.0.0.1:8071/docs/{V4}/").origin == "http://127.0.0.1:8071"


def test_bare_uuid_needs_instance() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_docs_url(V4)
    assert caught.value.details["reason"] == "INSTANCE_NOT_SET"
    assert parse_docs_url(V4, instance="https://docs.example.org/") == DocAddress(
        "https://docs.example.org", V4
    )


def test_other_instance_is_a_mismatch() -> None:
    with pytest.raises(InstanceMismatch) as caught:
        parse_docs_url(f"https://evil.example.net/docs/{V4}/", instance="https://docs.example.org")
    assert caught.value.code == "INSTANCE_MISMATCH"


@pytest.mark.parametrize(
    "link",
    [
        "",
        "not a link",
        "1234",
        f"ftp://docs.example.org/docs/{V4}/",
        f"https://docs.example.org/other/{V4}/",
        "https://docs.example.org/docs/not-a-uuid/",
        f"https://user:secret@docs.example.org/docs/{V4}/",
        f"https://docs.example.org:99999/docs/{V4}/",
    ],
)
def test_invalid_links(link: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_docs_url(link)
    assert caught.value.code == "INVALID_INPUT"
    assert "secret" not in str(caught.value)


def test_v1_uuid_refused_for_a_room() -> None:
    v1 = str(uuid.uuid1())
    with pytest.raises(InvalidInput, match="version 1"):
        parse_docs_url(f"https://docs.example.org/docs/{v1}/")
    assert not is_uuid_v4(v1)
    assert is_uuid_v4(str(uuid.uuid4()))


def test_normalize_instance_origin() -> None:
    assert normalize_instance_origin("HTTPS://Docs.Example.org:443/some/path") == "https://docs.example.org"
    with pytest.raises(InvalidInput):
        normalize_instance_origin("   ")
