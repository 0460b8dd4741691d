"""The OpenAPI document describes every /api route and method (SPEC 9)."""

from __future__ import annotations

import re

import yaml

from reviewapp import REPO_ROOT


def test_every_api_route_is_documented(app):
    spec = yaml.safe_load((REPO_ROOT / "reviewapp" / "api" / "openapi.yaml").read_text())
    documented = {(path, method.upper()) for path, ops in spec["paths"].items() for method in ops}
    routed = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        routed |= {(path, m) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert routed <= documented, routed - documented
    assert documented <= routed, documented - routed
