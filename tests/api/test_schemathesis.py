"""Property-based proof of the JSON API against its OpenAPI document (SPEC 9, 10).

A live app (werkzeug on a free 127.0.0.1 port, CSRF on as in production, the test
database: a fresh SQLite file, or PostgreSQL when ``REVIEWAPP_TEST_DB_URL`` is set) is
driven by schemathesis with a fixed, derandomized budget:

* known-good requests against seeded runs (verdicts, ratings of all four target types,
  lists, deletes, traces), so every success answer is checked, not only errors;
* every operation, with each way it authenticates (ingest token / login session plus
  ``X-CSRFToken``): up to ``COVERAGE_CASES`` of schemathesis' deterministic boundary
  cases, ``POSITIVE_EXAMPLES`` schema-valid and ``NEGATIVE_EXAMPLES`` schema-invalid cases;
* a stateful pass over the document's links (create a run -> finish it / read its trace /
  send its tool events) for ``STATEFUL_EXAMPLES`` scenarios, each in a workspace of its own.

Checks on every response: ``not_a_server_error``, ``status_code_conformance``,
``content_type_conformance``, ``response_schema_conformance`` and, for schema-invalid
cases, ``negative_data_rejection``. All failures are collected (not only the first) and
reported together. The summary line ``schemathesis: N operations, M examples, K 5xx`` is
printed (``pytest -s``) and recorded as the test's ``schemathesis`` user property (junit XML).
Typical run: 11 operation variants, about 1,020 requests, 20-45 s on this loaded machine
(SQLite or PostgreSQL). One-off runs with larger budgets: 5,197 examples on PostgreSQL
found one fault (runPk with target parameters answered 200; now 400, see
test_api_edges.py); after the fix 7,765 (SQLite) and 6,052 (PostgreSQL) found none.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import select

from reviewapp.actors import Actor
from reviewapp.models import DiagnosticReport, DiagnosticStep, Message
from reviewapp.services import admin

from ..factories import DEFAULT_PASSWORD
from .test_openapi import load_spec

POSITIVE_EXAMPLES = 40  # schema-valid cases per operation variant
NEGATIVE_EXAMPLES = 20  # schema-invalid cases per operation variant
COVERAGE_CASES = 40  # deterministic boundary cases per operation variant, at most
STATEFUL_EXAMPLES = 15  # link-following scenarios
STATEFUL_STEPS = 6  # calls per scenario at most

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@pytest.fixture
def app_config(app_config: dict[str, Any]) -> dict[str, Any]:
    """Production-like: CSRF on (the session variants send the real token)."""
    return {**app_config, "WTF_CSRF_ENABLED": True}


@dataclass
class Credentials:
    token_headers: dict[str, str]
    session_headers: dict[str, str]
    session_cookies: dict[str, str]
    new_token_headers: Callable[[], dict[str, str]]
    known: dict[str, Any]  # ids of the seeded runs and their targets


def _log_in(base: str, username: str) -> tuple[dict[str, str], dict[str, str]]:
    """Log in through the form; returns (cookies, headers with the page's CSRF token)."""
    browser = requests.Session()
    page = browser.get(f"{base}/login")
    form_token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text).group(1)
    answer = browser.post(f"{base}/login", allow_redirects=False, data={
        "username": username, "password": DEFAULT_PASSWORD, "csrf_token": form_token})
    assert answer.status_code == 303, answer.status_code
    home = browser.get(f"{base}/")
    api_token = re.search(r'"X-CSRFToken": "([^"]+)"', home.text).group(1)
    return dict(browser.cookies), {"X-CSRFToken": api_token}


@pytest.fixture
def credentials(make, session, live_server) -> Credentials:
    """A workspace with chat and AIOps runs (so generated small ids hit real targets),
    a reviewer logged in through the form, an ingest token, and a foreign workspace."""
    ws, other = make.workspace(), make.workspace()
    user = make.user(ws)
    make.user(other)
    seeded = [make.run(ws), make.aiops_run(ws), make.run(ws), make.aiops_run(ws)]
    make.run(other)
    make.aiops_run(other)
    chat, aiops, chat2, aiops2 = seeded
    answer = session.scalars(select(Message.id).where(
        Message.run_pk == chat.id, Message.role == "assistant")).one()
    known = {
        "chat": (chat.run_id, chat.session.session_id, chat.id, answer),
        "chat2": (chat2.run_id, chat2.session.session_id),
        "aiops2": (aiops2.run_id, aiops2.session.session_id),
        "step": session.scalars(select(DiagnosticStep.id).where(
            DiagnosticStep.run_pk == aiops.id).order_by(DiagnosticStep.ordinal)).first(),
        "report": session.scalars(select(DiagnosticReport.id).where(
            DiagnosticReport.run_pk == aiops.id)).one(),
        "aiops": (aiops.run_id, aiops.id),
    }
    secret = admin.create_token(session, Actor.system_actor(), ws.id, "agent").secret
    session.commit()
    cookies, headers = _log_in(live_server, user.username)
    session.rollback()  # the login wrote (last_login_at): a snapshot from before it cannot write

    # Made before the server is busy (SQLite has one writer): one workspace per scenario.
    pool = [admin.create_token(session, Actor.system_actor(), make.workspace().id, "stateful").secret
            for _ in range(STATEFUL_EXAMPLES * 4)]

    def new_token_headers() -> dict[str, str]:
        assert pool, "more stateful scenarios than prepared workspaces"
        return {"Authorization": f"Bearer {pool.pop()}"}

    return Credentials({"Authorization": f"Bearer {secret}"}, headers, cookies, new_token_headers,
                       known)


@dataclass
class Tally:
    """What the run did: requests per operation variant, statuses, distinct failures."""

    examples: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    by_label: dict[str, Counter] = field(default_factory=dict)
    server_errors: int = 0
    failures: dict[tuple[str, str], str] = field(default_factory=dict)

    def record(self, label: str, case: Any, response: Any, error: BaseException | None) -> None:
        self.examples[label] += 1
        self.statuses[response.status_code] += 1
        self.by_label.setdefault(label, Counter())[response.status_code] += 1
        if response.status_code >= 500:
            self.server_errors += 1
        if error is not None:
            for failure in getattr(error, "exceptions", [error]):
                title = getattr(failure, "title", type(failure).__name__)
                key = (label, f"{title} ({response.status_code})")
                self.failures.setdefault(
                    key, f"{case.as_curl_command()}\n  -> {response.status_code} "
                         f"{response.text[:300]}\n  {str(failure)[:600]}")


def _variants(creds: Credentials) -> list[tuple[str, str, dict[str, str], dict[str, str]]]:
    """(label, operationId, headers, cookies): every operation with each way it authenticates."""
    token = (creds.token_headers, {})
    login = (creds.session_headers, creds.session_cookies)
    by_operation = {
        "health": [("none", ({}, {}))],
        "setRunVerdict": [("token", token), ("session", login)],
        "listMyTargetFeedback": [("session", login)],
        "upsertTargetFeedback": [("session", login)],
        "deleteTargetFeedback": [("session", login)],
        "ingestRun": [("token", token)],
        "finishRun": [("token", token)],
        "ingestToolEvents": [("token", token)],
        "ingestOtelTraces": [("token", token)],
        "runTrace": [("token", token), ("session", login)],
    }
    return [(f"{op} [{auth}]", op, headers, cookies)
            for op, ways in by_operation.items() for auth, (headers, cookies) in ways]


def _budget(max_examples: int) -> Callable:
    return settings(
        max_examples=max_examples, derandomize=True, database=None, deadline=None,
        phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
    )


def _fuzz(schema: Any, creds: Credentials, base: str, tally: Tally, *,
          positive: int = POSITIVE_EXAMPLES, negative: int = NEGATIVE_EXAMPLES,
          coverage: int = COVERAGE_CASES, only: set[str] | None = None) -> None:
    http = requests.Session()
    operations = {op.ok().definition.raw["operationId"]: op.ok()
                  for op in schema.get_all_operations()}
    for label, op_id, headers, cookies in _variants(creds):
        if only is not None and op_id not in only:
            continue
        operation = operations[op_id]
        raw = operation.definition.raw
        modes = [(GenerationMode.POSITIVE, positive)]
        if negative and (raw.get("parameters") or raw.get("requestBody")):
            modes.append((GenerationMode.NEGATIVE, negative))
        # Coverage phase: schemathesis' deterministic boundary values (empty / huge /
        # NUL / wrong type per field, missing required parts), the first COVERAGE_CASES.
        if coverage:
            config = schema.config.generation_for(operation=operation, phase="coverage")
            cases = schema.iter_coverage_cases(
                operation, generation_modes=[m for m, _ in modes], generation_config=config)
            for case in itertools.islice(cases, coverage):
                invalid = case.meta is not None and case.meta.generation.mode is GenerationMode.NEGATIVE
                _call(case, label, http, base, headers, cookies, tally,
                      CHECKS + ([negative_data_rejection] if invalid else []))
        for mode, budget in modes:
            checks = CHECKS + ([negative_data_rejection] if mode is GenerationMode.NEGATIVE else [])

            @_budget(budget)
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: Any) -> None:
                _call(case, label, http, base, headers, cookies, tally, checks)

            run()


def _call(case: Any, label: str, http: requests.Session, base: str, headers: dict[str, str],
          cookies: dict[str, str], tally: Tally, checks: list[Any]) -> Any:
    """Send one case with the real credentials and record what the checks say."""
    # The real credentials replace whatever the generator put in their place.
    case.headers = {k: v for k, v in (case.headers or {}).items()
                    if k.lower() not in ("authorization", "x-csrftoken", "cookie")}
    case.cookies = {}
    response = case.call(base_url=base, session=http, headers=dict(headers), cookies=cookies,
                         timeout=30)
    try:
        case.validate_response(response, checks=checks, headers=dict(headers))
    except (AssertionError, BaseExceptionGroup) as error:  # Failure / FailureGroup
        tally.record(label, case, response, error)
    else:
        tally.record(label, case, response, None)
    return response


def _known_good(schema: Any, creds: Credentials, base: str, tally: Tally) -> None:
    """Hand-made valid requests against the seeded data, so every success answer (not only
    errors) is checked against its schema: random ids rarely hit a real target."""
    http = requests.Session()
    ops = {op.ok().definition.raw["operationId"]: op.ok() for op in schema.get_all_operations()}
    token = creds.token_headers
    login = (creds.session_headers, creds.session_cookies)
    chat_run, chat_session, chat_pk, answer = creds.known["chat"]
    aiops_run, aiops_pk = creds.known["aiops"]
    steps: list[tuple[str, str, dict[str, Any], tuple[dict[str, str], dict[str, str]], int]] = [
        ("setRunVerdict", "token", {"body": {"runId": chat_run, "sessionId": chat_session,
                                             "feedback": "useful"}}, (token, {}), 200),
        ("setRunVerdict", "session", {"body": {"sessionId": creds.known["chat2"][1],
                                               "feedback": "not_useful"}}, login, 200),
        ("setRunVerdict", "token", {"body": {"runId": creds.known["aiops2"][0],
                                             "sessionId": creds.known["aiops2"][1],
                                             "feedback": "not_useful"}}, (token, {}), 200),
        ("upsertTargetFeedback", "session", {"body": {
            "targetType": "chat_message", "targetId": answer, "rating": "negative",
            "reason": "incorrect", "comment": "wrong pod", "correction": "the node"}}, login, 200),
        ("upsertTargetFeedback", "session", {"body": {
            "targetType": "citation", "targetId": answer, "subjectId": "c1",
            "rating": "positive"}}, login, 200),
        ("upsertTargetFeedback", "session", {"body": {
            "targetType": "diagnostic_step", "targetId": creds.known["step"],
            "rating": "positive"}}, login, 200),
        ("upsertTargetFeedback", "session", {"body": {
            "targetType": "diagnostic_report", "targetId": creds.known["report"],
            "rating": "negative", "reason": "incomplete"}}, login, 200),
        ("listMyTargetFeedback", "session", {"query": {"runPk": chat_pk}}, login, 200),
        ("listMyTargetFeedback", "session", {"query": {
            "targetType": "citation", "targetId": answer}}, login, 200),
        ("runTrace", "token", {"path_parameters": {"run_id": chat_run}}, (token, {}), 200),
        ("runTrace", "session", {"path_parameters": {"run_id": aiops_run}}, login, 200),
    ]
    for op_id, auth, data, (headers, cookies), expected in steps:
        label = f"{op_id} [{auth}]"
        case = ops[op_id].Case(media_type="application/json" if "body" in data else None, **data)
        response = _call(case, label, http, base, headers, cookies, tally, CHECKS)
        if response.status_code != expected:
            tally.failures.setdefault((label, f"known-good request got {response.status_code}"),
                                      f"{data}: {response.text[:300]}")
    # Delete the ratings just made: 204, and the trace shows the rest.
    listed = http.get(f"{base}/api/feedback/targets", params={"runPk": chat_pk},
                      headers=creds.session_headers, cookies=creds.session_cookies).json()
    for row in listed["feedback"]:
        case = ops["deleteTargetFeedback"].Case(path_parameters={"feedback_id": row["id"]})
        response = _call(case, "deleteTargetFeedback [session]", http, base, *login, tally, CHECKS)
        if response.status_code != 204:
            tally.failures.setdefault(("deleteTargetFeedback [session]",
                                       f"known-good request got {response.status_code}"), str(row))


def _stateful(schema: Any, creds: Credentials, base: str, tally: Tally) -> None:
    """Follow the document's links (ingestRun -> finishRun / runTrace / ingestToolEvents)
    with the ingest token, recording like ``_fuzz``."""
    http = requests.Session()
    # Only the document's own links: the inferred ones would make ingestRun a link target
    # (never an entry point) and start every scenario with a finish of a random run id.
    schema.config.phases.stateful.inference.algorithms = []
    base_machine = schema.as_state_machine()

    class Machine(base_machine):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            # Each scenario writes into a workspace of its own: a replayed scenario sees
            # the same server state (hypothesis requires it) and scenarios do not collide.
            self.token_headers = creds.new_token_headers()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            case.headers = {k: v for k, v in (case.headers or {}).items()
                            if k.lower() not in ("authorization", "x-csrftoken", "cookie")}
            return {"base_url": base, "session": http, "headers": dict(self.token_headers),
                    "timeout": 30}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None,
                              **kwargs: Any) -> None:
            label = f"stateful {case.operation.definition.raw['operationId']} [token]"
            try:
                case.validate_response(response, checks=CHECKS, headers=self.token_headers)
            except (AssertionError, BaseExceptionGroup) as error:
                tally.record(label, case, response, error)
            else:
                tally.record(label, case, response, None)

    Machine.run(settings=settings(
        max_examples=STATEFUL_EXAMPLES, stateful_step_count=STATEFUL_STEPS, derandomize=True,
        database=None, deadline=None, phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    ))


def _load(spec: dict[str, Any], base: str) -> Any:
    schema = schemathesis.openapi.from_dict(spec)
    schema.config.update(base_url=base)
    # The real credentials are sent by the test; invented ones would only mask them.
    schema.config.generation.update(with_security_parameters=False, allow_x00=True)
    return schema


def test_the_harness_reports_a_misdocumented_api(live_server, credentials):
    """The checks can fail: a document that promises a different health body and forgets
    runTrace's 403 is caught on both counts (and nothing is a 5xx)."""
    spec = load_spec()
    health_200 = spec["paths"]["/api/health"]["get"]["responses"]["200"]
    health_200["content"]["application/json"]["schema"]["properties"]["status"] = {"const": "up"}
    del spec["paths"]["/api/runs/{run_id}/trace"]["get"]["responses"]["403"]
    tally = Tally()
    _fuzz(_load(spec, live_server), credentials, live_server, tally, positive=5, negative=0, coverage=0,
          only={"health", "runTrace"})
    titles = {(label, title) for label, title in tally.failures}
    assert ("health [none]", "Response violates schema (200)") in titles, titles
    assert ("runTrace [token]", "Undocumented status code (403)") in titles, titles
    assert tally.server_errors == 0


def test_api_conforms_to_its_openapi_document(live_server, credentials, request):
    started = time.monotonic()
    schema = _load(load_spec(), live_server)
    tally = Tally()
    _known_good(schema, credentials, live_server, tally)
    _fuzz(schema, credentials, live_server, tally)
    _stateful(schema, credentials, live_server, tally)
    elapsed = time.monotonic() - started

    variants = len([label for label in tally.examples if not label.startswith("stateful")])
    summary = (f"schemathesis: {variants} operations, {sum(tally.examples.values())} examples, "
               f"{tally.server_errors} 5xx")
    # The test report (junit XML <property>, also under xdist); record_property would warn
    # under the default junit_family xunit2, and warnings are errors here.
    request.node.user_properties.append(("schemathesis", summary))
    print(f"\n{summary} in {elapsed:.0f} s; statuses {dict(sorted(tally.statuses.items()))}")
    for label, count in sorted(tally.examples.items()):
        print(f"  {label}: {count} {dict(sorted(tally.by_label[label].items()))}")
    # Every variant really ran its budget (hypothesis may stop early only when the
    # strategy is exhausted, e.g. the body-less health check).
    assert variants == len(_variants(credentials))
    # The credentials and the links work: these reached real success, not only 4xx.
    succeeded = {label for label, statuses in tally.by_label.items()
                 if any(200 <= status < 300 for status in statuses)}
    assert {"setRunVerdict [token]", "setRunVerdict [session]", "upsertTargetFeedback [session]",
            "listMyTargetFeedback [session]", "deleteTargetFeedback [session]", "runTrace [token]",
            "runTrace [session]", "ingestRun [token]", "ingestToolEvents [token]",
            "stateful ingestRun [token]", "stateful finishRun [token]", "stateful runTrace [token]",
            "stateful ingestToolEvents [token]"} <= succeeded, succeeded
    report = "\n\n".join(f"{label}: {title}\n{detail}"
                         for (label, title), detail in sorted(tally.failures.items()))
    assert not tally.failures, f"{len(tally.failures)} distinct failures\n\n{report}"
    assert tally.server_errors == 0
