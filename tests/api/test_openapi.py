"""The OpenAPI document describes every /api route, body and response, errors included
(SPEC 9), and is a valid OpenAPI 3.1 document."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from reviewapp import REPO_ROOT
from reviewapp.errors import (
    FORBIDDEN_MESSAGE,
    Conflict,
    Forbidden,
    PayloadTooLarge,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
)

SPEC_PATH = REPO_ROOT / "reviewapp" / "api" / "openapi.yaml"
SCHEMAS = REPO_ROOT / "reviewapp" / "schemas"

# The published JSON Schemas and the component each is embedded as (their ``$defs`` become
# components named ``<Component>_<def>``).
EMBEDDED = {
    "RunDocument": "run_document.schema.json",
    "RunFinish": "run_finish.schema.json",
    "RunOutcome": "run_outcome.schema.json",
    "ToolEvent": "tool_event.schema.json",
}

# The error statuses each operation can answer, read from the handlers and services:
# every operation reads the database (503); authenticated ones 401; inputs 400; bodies 413;
# owner-checked targets 403; finish of a finished run and a rejected single event 409;
# a non-numeric feedback id or a line break in a run id matches no route (404).
EXPECTED_ERRORS = {
    "health": {503},
    "setRunVerdict": {400, 401, 403, 409, 413, 503},
    "listMyTargetFeedback": {400, 401, 403, 503},
    "upsertTargetFeedback": {400, 401, 403, 413, 503},
    "deleteTargetFeedback": {400, 401, 403, 404, 503},
    "ingestRun": {400, 401, 404, 409, 413, 503},
    "finishRun": {400, 401, 403, 404, 409, 413, 503},
    "setRunOutcome": {400, 401, 403, 404, 413, 503},
    "ingestToolEvents": {400, 401, 409, 413, 503},
    "runTrace": {400, 401, 403, 404, 409, 503},
    "ingestOtelTraces": {400, 401, 413, 415, 503},
}

# The code each error status carries, from reviewapp/errors.py and the app's handlers.
CODE_OF_STATUS = {
    400: ValidationFailed.code, 401: Unauthenticated.code, 403: Forbidden.code,
    404: "NOT_FOUND", 409: Conflict.code, 413: PayloadTooLarge.code,
    415: UnsupportedMediaType.code, 503: Unavailable.code,
}


def load_spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text())


def embedded_schemas() -> dict[str, Any]:
    """The components the published JSON Schemas become inside the OpenAPI document."""
    out: dict[str, Any] = {}
    for component, filename in EMBEDDED.items():
        schema = json.loads((SCHEMAS / filename).read_text())
        schema.pop("$schema", None)
        schema.pop("$id", None)
        defs = schema.pop("$defs", {})
        text = json.dumps(schema)
        for name in defs:
            text = text.replace(f'"#/$defs/{name}"', f'"#/components/schemas/{component}_{name}"')
        out[component] = json.loads(text)
        for name, sub in defs.items():
            sub_text = json.dumps(sub)
            for other in defs:
                sub_text = sub_text.replace(
                    f'"#/$defs/{other}"', f'"#/components/schemas/{component}_{other}"')
            out[f"{component}_{name}"] = json.loads(sub_text)
    return out


def operations(spec: dict[str, Any]):
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            yield path, method, op


def resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        parts = node["$ref"].removeprefix("#/").split("/")
        node = spec
        for part in parts:
            node = node[part]
    return node


def test_every_api_route_is_documented(app):
    spec = load_spec()
    documented = {(path, method.upper()) for path, method, _ in operations(spec)}
    routed = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        routed |= {(path, m) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert routed <= documented, routed - documented
    assert documented <= routed, documented - routed


def test_document_is_valid_openapi_3_1():
    spec = load_spec()
    assert spec["openapi"].startswith("3.1.")
    validate(spec)  # raises OpenAPIValidationError with the offending path


def test_validator_rejects_a_broken_document():
    """The validity check above can fail: a dangling $ref is reported."""
    spec = load_spec()
    broken = copy.deepcopy(spec)
    broken["paths"]["/api/health"]["get"]["responses"]["503"] = {
        "$ref": "#/components/responses/NoSuchResponse"}
    with pytest.raises(Exception, match="NoSuchResponse"):
        validate(broken)


def test_every_operation_documents_its_error_responses():
    spec = load_spec()
    seen = {}
    for path, method, op in operations(spec):
        statuses = {int(code) for code in op["responses"] if not code.startswith("2")}
        seen[op["operationId"]] = statuses
        # Floors that follow from the operation's shape.
        assert 503 in statuses, (path, method)
        if op.get("security"):
            assert 401 in statuses, (path, method)
        if op.get("requestBody") or op.get("parameters"):
            assert 400 in statuses or all(
                p["in"] == "path" and resolve(spec, p["schema"]).get("type") == "integer"
                for p in op.get("parameters", [])
            ), (path, method)
        if op.get("requestBody"):
            assert 413 in statuses, (path, method)
        assert any(code.startswith("2") for code in op["responses"]), (path, method)
    assert seen == EXPECTED_ERRORS


def test_error_responses_use_the_error_body_of_errors_py():
    spec = load_spec()
    error_schema = spec["components"]["schemas"]["Error"]
    assert set(error_schema["properties"]["error"]["properties"]) == {"code", "message", "details"}
    for path, method, op in operations(spec):
        for code, response in op["responses"].items():
            if code.startswith("2"):
                continue
            schema = resolve(spec, response)["content"]["application/json"]["schema"]
            base, narrowing = schema["allOf"]
            assert base == {"$ref": "#/components/schemas/Error"}, (path, method, code)
            inner = narrowing["properties"]["error"]["properties"]
            assert inner["code"] == {"const": CODE_OF_STATUS[int(code)]}, (path, method, code)
            if code == "403":
                assert inner["message"] == {"const": FORBIDDEN_MESSAGE}


def test_error_body_schema_matches_what_errors_py_renders():
    """A rendered ServiceError body validates against the documented schema; an extra key fails."""
    from jsonschema import Draft202012Validator

    spec = load_spec()
    schema = {**spec["components"]["schemas"]["Error"], "$defs": {}}
    validator = Draft202012Validator(schema)
    for error in (ValidationFailed("messages[0].content", "contains a NUL character"),
                  Forbidden(), Unavailable(), Conflict("run is already SUCCESS", details={"a": 1})):
        assert not list(validator.iter_errors(error.to_dict()))
    assert list(validator.iter_errors({"error": {"code": "CONFLICT", "message": "x", "extra": 1}}))


def test_published_json_schemas_are_embedded_unchanged():
    spec = load_spec()
    components = spec["components"]["schemas"]
    for name, schema in embedded_schemas().items():
        assert components.get(name) == schema, name
    ops = {op["operationId"]: op for _, _, op in operations(spec)}

    def body_ref(op_id: str) -> Any:
        return ops[op_id]["requestBody"]["content"]["application/json"]["schema"]

    assert body_ref("ingestRun") == {"$ref": "#/components/schemas/RunDocument"}
    assert body_ref("finishRun") == {"$ref": "#/components/schemas/RunFinish"}
    assert body_ref("setRunOutcome") == {"$ref": "#/components/schemas/RunOutcome"}
    assert {"$ref": "#/components/schemas/ToolEvent"} in body_ref("ingestToolEvents")["oneOf"]


@pytest.mark.parametrize("candidate", [
    "run-1", "tau-airline-t3-r0", "with space", "日本語", "a.b:c@d", "x" * 160, " a ",
    "a/b", "abc/finish", "/", "a\x00b", "\x00", "a\nb", "a\tb", "a\x7fb", "   ", "\u3000", "",
])
def test_documented_run_id_pattern_is_the_services_rule(candidate):
    from reviewapp.errors import ValidationFailed
    from reviewapp.services.runs import check_run_id

    documented = load_spec()["components"]["schemas"]["RunId"]
    doc_ok = (re.search(documented["pattern"], candidate) is not None
              and documented["minLength"] <= len(candidate) <= documented["maxLength"])
    try:
        check_run_id(candidate)
        service_ok = True
    except ValidationFailed:
        service_ok = False
    assert doc_ok == service_ok
    assert service_ok == (candidate in {"run-1", "tau-airline-t3-r0", "a.b:c@d", "x" * 160})


def _enums(node: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], list[Any]]]:
    """Every ``enum`` in ``node`` with the keys leading to it (a parameter object adds its
    ``name``)."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            found.append((path, node["enum"]))
        if isinstance(node.get("name"), str) and isinstance(node.get("schema"), dict):
            found += _enums(node["schema"], (*path, node["name"]))
        for key, value in node.items():
            if key != "schema" or "name" not in node:
                found += _enums(value, (*path, str(key)))
    elif isinstance(node, list):
        for item in node:
            found += _enums(item, path)
    return found


def test_vocabulary_enums_are_the_registries():
    """The OpenAPI enums of target types, verdicts, verifier verdicts and ratings list
    exactly the codes of their registries (domain/target_types.py, verdicts.py), in order:
    a code added to a registry must be published, and the document cannot drift."""
    from reviewapp.domain.feedback import RATINGS
    from reviewapp.domain.target_types import TARGET_TYPES
    from reviewapp.domain.verdicts import VERDICTS, VERIFIER_VERDICTS

    vocabularies = {
        "target type": (lambda p: p[-1] in ("targetType", "target_type", "TargetType"),
                        TARGET_TYPES.codes()),
        "verdict": (lambda p: p[-1] == "feedback" or (p[-1] == "verdict" and "feedback" in p),
                    VERDICTS.codes()),
        "verifier verdict": (lambda p: p[-1] == "verdict" and any(
            "verifier_evaluation" in k for k in p), VERIFIER_VERDICTS.codes()),
        "rating": (lambda p: p[-1] == "rating", RATINGS),
    }
    enums = _enums(load_spec())
    for name, (where, codes) in vocabularies.items():
        lists = [[v for v in values if v is not None] for path, values in enums if path and where(path)]
        assert lists, f"no {name} enum found in the document"
        assert all(values == list(codes) for values in lists), (name, lists, codes)


def test_every_target_type_field_refers_to_the_one_target_type_enum():
    """The target type codes are written once in the document (components.schemas.
    TargetType, compared with the registry above); the request, the trace's items and
    the list's query parameter refer to it (a new type is one edit here)."""
    spec = load_spec()
    ref = {"$ref": "#/components/schemas/TargetType"}
    schemas, paths = spec["components"]["schemas"], spec["paths"]
    assert schemas["TargetFeedbackRequest"]["properties"]["targetType"] == ref
    feedback = schemas["RunTrace"]["properties"]["feedback"]["properties"]
    assert feedback["items"]["items"]["properties"]["targetType"] == ref
    (param,) = [p for p in paths["/api/feedback/targets"]["get"]["parameters"]
                if p["name"] == "targetType"]
    assert param["schema"] == ref
    text = SPEC_PATH.read_text()
    assert text.count("- conversation_turn\n") == 1 and text.count("- chat_message\n") == 1
