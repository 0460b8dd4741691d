"""A cursor is base64 JSON the user can rewrite: a valid-shaped one holding a key value
its column cannot hold — an integer above the column's range (it overflowed the database
driver: a 500), a float, a bool, a timestamp that is not one — is a 400 naming ``cursor``
on every keyset list, never a 500 (README: an id above 2,147,483,647 in a query; new-user
finding 2026-12-02). The check lives in the one keyset helper (``services/keyset.py``)."""

from __future__ import annotations

import base64
import json

import pytest
from sqlalchemy import BigInteger, Column, DateTime, Integer, MetaData, SmallInteger, String, Table

from reviewapp.actors import Role
from reviewapp.errors import ValidationFailed
from reviewapp.services import review_queues as rq
from reviewapp.services.keyset import SortKey, SortOrder

HUGE = 99999999999999999999999
STAMP = "2026-12-02T05:22:21.987181+00:00"


def _cursor(order: str, values: list) -> str:
    """A cursor spelled by hand: unpadded URL-safe base64 of ``[order, values]`` JSON."""
    raw = json.dumps([order, values]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.fixture
def places(make, login, session):
    """The lists' URLs for an admin (also a lead) of a workspace with one queue."""
    ws = make.workspace()
    boss = make.user(ws, Role.ADMIN)
    make.run(ws, query="Listed question?")
    queue, _ = rq.create_queue(session, make.actor(boss), ws.id, "Q", {"kind": "chat"})
    session.commit()
    login(boss)
    return {"queue": f"/queues/{queue.id}", "audit": f"/admin/{ws.id}/audit",
            "triage": "/triage/", "runs": "/", "cases": "/cases/"}


# (list, its sort parameter or "", the order's name, the values around the int key)
LISTS = [
    ("queue", "", "added", lambda v: [v]),
    ("audit", "", "newest", lambda v: [v]),
    ("triage", "", "newest", lambda v: [STAMP, v]),
    ("runs", "", "newest", lambda v: [STAMP, v]),
    ("runs", "oldest", "oldest", lambda v: [STAMP, v]),
    ("runs", "calls_desc", "calls_desc", lambda v: [3, v]),
    ("runs", "calls_desc", "calls_desc", lambda v: [v, 7]),
    ("runs", "score_desc", "score_desc", lambda v: [v, 7]),
]
BAD_INTS = [HUGE, -HUGE, 2**31, -(2**31) - 1, 2**63, 1.5, 2.0, True, False, "7", None]


@pytest.mark.parametrize("where, sort, order, values", LISTS)
@pytest.mark.parametrize("bad", BAD_INTS, ids=repr)
def test_a_key_value_its_column_cannot_hold_is_a_400_naming_cursor(
        client, places, where, sort, order, values, bad):
    query = f"?sort={sort}&" if sort else "?"
    response = client.get(f"{places[where]}{query}cursor={_cursor(order, values(bad))}")
    assert response.status_code == 400, response.status_code
    html = response.get_data(as_text=True)
    assert "cursor" in html.lower() or "Page link" in html


@pytest.mark.parametrize("where, sort, order, values", LISTS)
@pytest.mark.parametrize("edge", [2**31 - 1, -(2**31)], ids=repr)
def test_the_int_column_s_own_range_is_still_read(client, places, where, sort, order, values,
                                                  edge):
    query = f"?sort={sort}&" if sort else "?"
    response = client.get(f"{places[where]}{query}cursor={_cursor(order, values(edge))}")
    assert response.status_code == 200


@pytest.mark.parametrize("where, order, values", [
    ("triage", "newest", ["9999-12-31T23:00:00-05:00", 5]),  # past year 9999 in UTC
    ("triage", "newest", ["0001-01-01T00:00:00+05:00", 5]),  # before year 1 in UTC
    ("triage", "newest", ["2026-12-02T05:22:21", 5]),         # no offset
    ("triage", "newest", [HUGE, 5]),
    ("runs", "newest", ["yesterday", 5]),
    ("cases", "newest", [STAMP, HUGE]),
    ("cases", "newest", [STAMP, "a\x00b"]),                   # PostgreSQL text holds no NUL
    ("cases", "newest", [STAMP, "\ud800"]),                   # a lone surrogate: not UTF-8
    ("cases", "newest", [STAMP, "x" * 37]),                   # longer than a case id
    ("cases", "newest", [HUGE, "c"]),
])
def test_a_timestamp_or_text_key_its_column_cannot_hold_is_a_400(client, places, where,
                                                                order, values):
    response = client.get(f"{places[where]}?cursor={_cursor(order, values)}")
    assert response.status_code == 400


def test_a_readable_timestamp_and_case_id_are_still_read(client, places):
    assert client.get(f"/triage/?cursor={_cursor('newest', ['9999-12-31T00:00:00+00:00', 5])}"
                      ).status_code == 200
    assert client.get(f"/cases/?cursor={_cursor('newest', [STAMP, 'x' * 36])}").status_code == 200


_table = Table("t", MetaData(), Column("small", SmallInteger), Column("big", BigInteger),
               Column("plain", Integer), Column("at", DateTime), Column("name", String(4)))


@pytest.mark.parametrize("column, low, high", [
    ("small", -(2**15), 2**15 - 1), ("plain", -(2**31), 2**31 - 1),
    ("big", -(2**63), 2**63 - 1)])
def test_each_int_key_binds_within_its_column_type_s_range(column, low, high):
    order = SortOrder("s", "S", (SortKey(_table.c[column], True, lambda row: row),))
    assert order.bind([low]) == [low] and order.bind([high]) == [high]
    for outside in (low - 1, high + 1, 1.0, True):
        with pytest.raises(ValidationFailed) as refused:
            order.bind([outside])
        assert refused.value.field == "cursor"


def test_a_key_read_back_as_int_must_be_an_integer_column():
    with pytest.raises(TypeError):
        SortKey(_table.c.name, True, lambda row: row)
    with pytest.raises(TypeError):
        SortKey(_table.c.at, True, lambda row: row)
