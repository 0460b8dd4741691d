"""Redaction never makes a bounded text too long to store (SPEC 4, 9): ``[redacted]`` is
longer than a short secret it replaces (``pwd=x`` -> ``pwd=[redacted]``), so a step
name, a step status or an outcome label within its schema limit could come out past its
column's width, a 500 on PostgreSQL with the run lost. Redacted first, then cut to the
limit of the schema (the cut never uncovers a secret), the run is stored."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from reviewapp.models import DiagnosticStep as Step
from reviewapp.models import Run

GROWS = "pwd=x pwd=x pwd=x pwd=x pwd=x"  # 29 characters; each "x" is a secret of one letter
# Limits of the schemas (run_document / run_outcome .schema.json), not of the code.
OUTCOME_LIMIT, STEP_NAME_LIMIT, STEP_STATUS_LIMIT = 32, 300, 32


@pytest.fixture
def headers(make):
    return {"Authorization": f"Bearer {make.token(make.workspace('bounded'))}"}


def _stored_run(session, run_id: str) -> Run:
    session.expire_all()
    return session.scalars(select(Run).where(Run.run_id == run_id)).one()


def test_a_step_name_and_status_that_grow_when_redacted_are_stored_cut(client, session, headers):
    name = ("pwd=x " * 50)[:STEP_NAME_LIMIT]
    body = {"session_id": "s", "kind": "aiops", "status": "SUCCESS", "query": "q", "answer": "a",
            "external_outcome": GROWS,
            "steps": [{"id": "s1", "name": name, "status": GROWS, "summary": "pwd=x"}]}
    response = client.put("/api/ingest/runs/grows", json=body, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)[:300]
    run = _stored_run(session, "grows")
    [step] = session.scalars(select(Step).where(Step.run_pk == run.id)).all()
    assert step.name == ("pwd=[redacted] " * 20)[:STEP_NAME_LIMIT]
    assert step.status == "pwd=[redacted] pwd=[redacted] pw"
    assert run.external_outcome == "pwd=[redacted] pwd=[redacted] pw"
    assert step.summary == "pwd=[redacted]"  # a summary has no such limit
    for column, value in ((Step.name, step.name), (Step.status, step.status),
                          (Run.external_outcome, run.external_outcome)):
        assert len(value) <= column.type.length


def test_an_outcome_label_that_grows_when_redacted_is_stored_cut(client, session, headers, make):
    client.put("/api/ingest/runs/labelled", json={"session_id": "s2", "kind": "chat", "status": "SUCCESS",
                                                 "query": "q", "answer": "a"}, headers=headers)
    response = client.patch("/api/ingest/runs/labelled/outcome", json={"external_outcome": GROWS},
                            headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert _stored_run(session, "labelled").external_outcome == "pwd=[redacted] pwd=[redacted] pw"
