"""A run made from OpenTelemetry data, as a reviewer sees it (issue 13): timeline, evidence
score and the citation gatekeeper's badges, at 1280 and 390 px."""

from __future__ import annotations

import pytest

from reviewapp.actors import Actor
from reviewapp.models import Run
from reviewapp.services import admin

from ..otel.otlp import provider
from ..otel.test_otel_live import genai_trace
from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser


def test_run_page_from_otel_data(new_page, make, session, live_server):
    ws = make.workspace()
    make.user(ws, username="otto.reviewer")
    token = admin.create_token(session, Actor.system_actor(), ws.id, "otel").secret
    tracer_provider, _ = provider(live_server, token)
    run_id = genai_trace(tracer_provider.get_tracer("agent"))
    tracer_provider.shutdown()
    pk = session.query(Run).filter_by(run_id=run_id).one().id
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page = new_page(width=width)
        log_in(page, "otto.reviewer")
        page.goto(f"/runs/{pk}")
        timeline = page.locator(".timeline").inner_text()
        for name in ("query_logs", "query_metrics", "retrieval kb"):
            assert name in timeline
        assert page.locator(".tl-row").count() == 3
        assert "50" in page.locator(".ev-score").inner_text()
        assert page.locator(".badge-verified").first.is_visible()
        assert page.locator(".badge-unverified").first.is_visible()
        page.screenshot(path=str(SCREENSHOTS / f"otel-run-{width}.png"), full_page=True)
