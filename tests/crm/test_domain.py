"""Pure validation, search quoting and cursors."""

from __future__ import annotations

import math

import pytest

from elynav_nb.crm import domain
from elynav_nb.errors import InvalidInput


def test_email_without_at_is_refused_with_a_fix() -> None:
    with pytest.raises(InvalidInput) as caught:
        domain.validate_email("jeanne.martin.exemple.fr")
    assert caught.value.code == "INVALID_INPUT"
    assert "has no '@'" in str(caught.value)


@pytest.mark.parametrize("bad_email", ["a@b", "a b@c.fr", "a@@c.fr", "@c.fr", "a@c.", ""])
def test_malformed_emails_are_refused(bad_email: str) -> None:
    with pytest.raises(InvalidInput):
        domain.validate_email(bad_email)


def test_email_is_normalised_to_lower_case() -> None:
    assert domain.validate_email("  Jeanne.Martin@Exemple.FR ") == "jeanne.martin@exemple.fr"


@pytest.mark.parametrize("bad_amount", [-0.01, -5, math.nan, math.inf, True, "100"])
def test_bad_amounts_are_refused(bad_amount: object) -> None:
    with pytest.raises(InvalidInput):
        domain.validate_amount(bad_amount)


def test_amount_is_rounded_to_the_cent() -> None:
    assert domain.validate_amount(1234.567) == 1234.57
    assert domain.validate_amount(0) == 0.0


def test_unknown_stage_lists_the_allowed_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        domain.validate_stage("closed-won")
    assert "prospecting, qualification, proposal, negotiation, won, lost" in str(caught.value)
    assert domain.validate_stage(" Won ") == "won"


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(InvalidInput, match="email, call, meeting, note, linkedin"):
        domain.validate_kind("fax")


def test_one_megabyte_body_is_refused_and_the_cap_is_accepted() -> None:
    with pytest.raises(InvalidInput, match="limit is 65,536 bytes"):
        domain.validate_body("x" * 1_000_000)
    assert len(domain.validate_body("x" * domain.MAX_BODY_BYTES)) == domain.MAX_BODY_BYTES
    with pytest.raises(InvalidInput):  # the cap counts UTF-8 bytes, not characters
        domain.validate_body("é" * (domain.MAX_BODY_BYTES // 2 + 1))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("acme", '"acme"*'),
        ("Acme Lyon", '"Acme"* "Lyon"*'),
        ("'; DROP TABLE accounts; --", '"DROP"* "TABLE"* "accounts"*'),
        ('acme" OR name:*', '"acme"* "OR"* "name"*'),
        ("NEAR(a b) AND ^c", '"NEAR"* "a"* "b"* "AND"* "c"*'),
        ("société", '"société"*'),
    ],
)
def test_search_expression_quotes_every_word(query: str, expected: str) -> None:
    assert domain.search_expression(query) == expected


def test_search_expression_without_words_matches_nothing() -> None:
    assert domain.search_expression("\"'*:^()--;") is None
    assert domain.search_expression("___") is None


def test_too_many_search_words_are_refused() -> None:
    with pytest.raises(InvalidInput):
        domain.search_expression(" ".join(["mot"] * 20))


def test_cursor_round_trip_and_forged_cursors() -> None:
    assert domain.decode_cursor(domain.encode_cursor(40)) == 40
    assert domain.decode_cursor(None) == 0
    for forged in ["abc", "b2Zmc2V0Oi0x", "x" * 100, 12]:  # b2Z... is "offset:-1"
        with pytest.raises(InvalidInput, match="next_cursor"):
            domain.decode_cursor(forged)


def test_limit_bounds() -> None:
    assert domain.validate_limit(100) == 100
    for bad_limit in [0, 101, -1, True]:
        with pytest.raises(InvalidInput):
            domain.validate_limit(bad_limit)


def test_timestamps_are_normalised_to_utc() -> None:
    assert domain.validate_timestamp("occurred_at", "2025-03-14T10:30:00+01:00") == "2025-03-14T09:30:00Z"
    assert domain.validate_timestamp("occurred_at", "2025-03-14") == "2025-03-14T00:00:00Z"
    with pytest.raises(InvalidInput, match="ISO 8601"):
        domain.validate_timestamp("occurred_at", "last tuesday")


def test_domain_and_country() -> None:
    assert domain.validate_domain("Exemple.FR") == "exemple.fr"
    for bad_domain in ["https://exemple.fr", "exemple", "a@exemple.fr", "exemple.fr/path"]:
        with pytest.raises(InvalidInput):
            domain.validate_domain(bad_domain)
    assert domain.validate_country("fr") == "FR"
    with pytest.raises(InvalidInput, match="two-letter"):
        domain.validate_country("France")
