"""Fixtures of the triage service tests: a queue of three items and its people."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reviewapp.actors import Role

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def queue(make):
    """A workspace with a lead, a second lead, an admin, a reviewer and three items."""
    ws = make.workspace()
    lead, lead2 = make.user(ws, Role.LEAD), make.user(ws, Role.LEAD)
    admin, reviewer = make.user(ws, Role.ADMIN), make.user(ws, Role.REVIEWER)
    runs = [make.run(ws) for _ in range(3)]
    items = [make.triage_item(r, created_at=T0 + timedelta(hours=i)) for i, r in enumerate(runs)]
    return type("Queue", (), dict(ws=ws, lead=lead, lead2=lead2, admin=admin, reviewer=reviewer,
                                  runs=runs, items=items))


def row_ids(page):
    return [row.id for row in page.rows]
