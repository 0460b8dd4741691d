"""Hostile text for the XSS proofs: the payload corpus, the fields it goes into, a world
that holds every payload in every field, and the HTML checks (html5lib, the HTML5
parsing algorithm browsers use, never a regex over the raw text).

Every stored value is ``<payload> <tag>``: the tag (``zqFFxPP``: field FF, payload PP)
lets a test prove the field is really shown on some page, so "nothing active" is
never the trivial result of a field that no page displays.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import html5lib

from reviewapp.actors import Role

PAYLOADS: tuple[str, ...] = (
    # script elements
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//xss.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<template><script>alert(1)</script></template>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    # event handlers
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<svg/onload=alert(1)>",
    "<body onload=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)>",
    # frames, objects, foreign content, styles
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<iframe srcdoc=\"<script>alert(1)</script>\">",
    "<object data=\"javascript:alert(1)\">",
    "<embed src=\"javascript:alert(1)\">",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<style>@import 'https://xss.example/x.css';</style>",
    "<div style=\"background:url(javascript:alert(1))\">x</div>",
    "<link rel=stylesheet href=https://xss.example/x.css>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<base href=\"https://xss.example/\">",
    # URLs with dangerous schemes
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"&#106;avascript:alert(1)\">x</a>",
    "<a href=\"java\tscript:alert(1)\">x</a>",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>",
    "<form action=\"javascript:alert(1)\"><button>x</button></form>",
    "<button formaction=\"javascript:alert(1)\">x</button>",
    # Markdown link / image tricks
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](data:text/html,<script>alert(1)</script>)",
    "[x](vbscript:msgbox(1))",
    "![x](x\" onerror=\"alert(1))",
    "![x](javascript:alert(1))",
    "![x](https://xss.example/pixel.png)",
    "[x](https://example.com\" onmouseover=\"alert(1))",
    "[x]\n\n[x]: javascript:alert(1)",
    "<javascript:alert(1)>",
    "https://example.com/\"><script>alert(1)</script>",
    # attribute breakouts, unclosed and broken tags
    "\"><script>alert(1)</script>",
    "'><img src=x onerror=alert(1)>",
    "`><img src=x onerror=alert(1)>`",
    "\" onmouseover=\"alert(1)",
    "' onfocus='alert(1)' autofocus='",
    "<img src=x onerror=alert(1)//",
    "<!--<img src=\"--><img src=x onerror=alert(1)//\">",
    "</textarea><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    # htmx attributes (an htmx page would act on them)
    "<div hx-get=\"/logout\" hx-trigger=\"load\">x</div>",
    # Unicode and entities
    "\u202egnp.exe",
    "abc\u2066def\u2069\u202aghi\u202c",
    "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;img src=x onerror=alert(1)&#62;",
    # template injection
    "{{7*7}}",
    "{{ 1337*1337 }} {% print(1337*1337) %}",
    "{{ config.SECRET_KEY }}{{ ''.__class__ }}",
    "${7*7} #{7*7}",
)

TEMPLATE_EVALUATED = ("1787569",)  # 1337*1337: the output of an evaluated payload
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")

# field name -> column length limit (None: no limit that matters)
FIELDS: dict[str, int | None] = {
    # run ids are limited to a safe pattern at ingest (no payload can be stored there)
    "run.query": None, "run.answer": None, "run.session_id": 160,
    "run.alert": None, "run.external_outcome": 32,
    "message.user": None, "message.tool": None, "message.system": None,
    "citation.id": 150, "citation.title": None, "citation.source": None,
    "citation.url": None, "citation.excerpt": None, "citation.evidence_ref": None,
    "step.name": 300, "step.summary": None, "step.status": 32, "report.content": None,
    "tool.name": 200, "tool.arguments": None, "tool.output": None, "tool.error": None,
    "tool.evidence_ref": None, "tool.evidence_excerpt": None, "tool.call_id": 150,
    "verifier.rationale": None, "verifier.claim": None,
    "feedback.comment": None, "feedback.correction": None, "feedback.reason": 80,
    "case.title": 200, "case.root_cause": None, "case.solution": None,
    "case.error_code": 120, "case.service": 120, "case.fault_category": 64,
    "case.created_by": 80,
    "triage.note": None, "triage.fault_category": 64,
    "user.username": 80, "workspace.name": 200, "workspace.reason_code": None,
}
FIELD_NAMES = tuple(FIELDS)
# The agent's identifiers (domain.ids): a payload's control characters become spaces there.
ID_FIELDS = frozenset({"run.session_id", "tool.name", "tool.call_id"})


def tag(field_name: str, p: int) -> str:
    return f"zq{FIELD_NAMES.index(field_name):02d}x{p:02d}"


def value(field_name: str, p: int) -> str:
    """The payload ``p`` for ``field_name``: payload, space, tag, cut to the column."""
    limit = FIELDS[field_name]
    suffix = " " + tag(field_name, p)
    payload = PAYLOADS[p]
    if field_name in ID_FIELDS:  # control characters are refused there (domain.ids)
        payload = "".join(" " if unicodedata.category(c) == "Cc" else c for c in payload)
    if limit is not None and len(payload) + len(suffix) > limit:
        payload = payload[: limit - len(suffix)]
    return payload + suffix


@dataclass
class Target:
    """What one payload was put into."""

    p: int
    workspace: Any
    user: Any
    run: Any
    case: Any
    item: Any
    call_ids: list[str] = field(default_factory=list)

    def call_path(self, call_id: str) -> str:
        return f"/runs/{self.run.id}/tool-calls/{quote(call_id, safe='')}"


def build_world(make, session, viewer, payload_indexes) -> list[Target]:
    """One workspace per payload, named with it; a lead named with it; an AIOps run
    holding the payload in every run field; feedback, a case and a triage item holding
    it too. ``viewer`` (a user) becomes admin of every workspace and rates each answer
    with the payload as reason, comment and correction (their own thumbs show them)."""
    from reviewapp.models import Membership

    targets = []
    for p in payload_indexes:
        v = lambda name: value(name, p)  # noqa: E731 - short local alias
        ws = make.workspace(slug=f"xss-{p}", name=v("workspace.name"),
                            feedback_reasons=["incorrect", v("workspace.reason_code")])
        session.add(Membership(user_id=viewer.id, workspace_id=ws.id, role=Role.ADMIN.value))
        session.commit()
        user = make.user(ws, Role.LEAD, username=v("user.username"))
        call_ok, call_failed = v("tool.call_id") + "-ok", v("tool.call_id") + "-failed"
        run = make.aiops_run(
            ws, f"xss-run-{p}", session_id=v("run.session_id"), query=v("run.query"),
            answer=v("run.answer"), alert={"title": v("run.alert"), v("run.alert"): [1]},
            external_outcome=v("run.external_outcome"),
            messages=[
                {"id": "u1", "role": "user", "content": v("message.user")},
                {"id": "s1", "role": "system", "content": v("message.system")},
                {"id": "a1", "role": "assistant", "content": v("run.answer"), "metadata": {
                    "citations": [
                        {"id": v("citation.id"), "title": v("citation.title"),
                         "source": v("citation.source"), "excerpt": v("citation.excerpt"),
                         "evidence_ref": v("citation.evidence_ref")},
                        {"id": "url", "title": "t", "source": "https://example.com/" + v("citation.url")},
                    ]}},
                {"id": "t1", "role": "tool", "content": v("message.tool")},
            ],
            steps=[{"id": "s1", "name": v("step.name"), "status": v("step.status"),
                    "summary": v("step.summary")}],
            report={"content": v("report.content")},
            tool_calls=[
                {"id": call_ok, "tool_name": v("tool.name"), "status": "completed",
                 "arguments": {"q": v("tool.arguments"), v("tool.arguments"): True},
                 "output": v("tool.output"),
                 "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:00:01Z",
                 "retrieval": {"match_level": "L1", "hit_count": 1, "evidence_refs": [
                     {"ref": v("tool.evidence_ref"), "excerpt": v("tool.evidence_excerpt")}]}},
                {"id": call_failed, "tool_name": v("tool.name"), "status": "failed",
                 "error": v("tool.error"), "started_at": "2026-01-01T00:00:01Z",
                 "completed_at": "2026-01-01T00:00:02Z"},
            ],
            verifier_evaluation={"verdict": "REJECT", "rationale": v("verifier.rationale"),
                                 "claim_checks": [{"claim": v("verifier.claim"), "supported": False}]},
        )
        texts = {"reason": v("feedback.reason"), "comment": v("feedback.comment"),
                 "correction": v("feedback.correction")}
        make.feedback_row(run, user, **texts)  # the answer: shown in the triage pages
        make.feedback_row(run, viewer, target_type="diagnostic_report",  # the viewer's thumbs
                          target_id=run.report.id, **texts)
        case = make.case(ws, run=run, title=v("case.title"), root_cause=v("case.root_cause"),
                         solution=v("case.solution"), error_code=v("case.error_code"),
                         service=v("case.service"), fault_category=v("case.fault_category"),
                         created_by=v("case.created_by"))
        item = make.triage_item(run, assignee=user, note=v("triage.note"),
                                fault_category=v("triage.fault_category"))
        targets.append(Target(p, ws, user, run, case, item, [call_ok, call_failed]))
    return targets


# --------------------------------------------------------------------------- checks

APP_SCRIPTS = {"/static/js/htmx-2.0.11.min.js", "/static/js/app.js"}
APP_LINKS = {"/static/css/app.css", "/static/img/favicon.svg"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "srcdoc", "poster", "background",
                  "xlink:href", "{http://www.w3.org/1999/xlink}href", "ping", "cite", "manifest"}
FORBIDDEN_ELEMENTS = {"iframe", "frame", "frameset", "object", "embed", "applet", "base", "style",
                      "template", "noscript", "portal", "math"}
DANGEROUS_SCHEMES = ("javascript:", "data:", "vbscript:")
_STRIP = re.compile(r"[\x00-\x20\u00a0\u2000-\u200f\u2028\u2029\ufeff]+")


def _local(tag_name: Any) -> str:
    return tag_name.rsplit("}", 1)[-1].lower() if isinstance(tag_name, str) else ""


def parse(html: str):
    """The document as a browser would build it (html5lib), as an ElementTree."""
    return html5lib.parse(html, namespaceHTMLElements=False)


def active_payloads(html: Any, routes: Any = None) -> list[str]:
    """What in ``html`` could run or load something a payload put there: script
    elements other than the app's own files, ``on*`` attributes, javascript: / data: /
    vbscript: URLs, frames / objects / embeds / base / style / meta refresh, foreign
    stylesheets, inline styles, htmx attributes that would request anything but the
    app's own swap routes (``routes``: ``app.url_map.bind(...)``) or run script.
    [] is clean. ``html``: the page's text, or its ``parse`` result."""
    problems = []
    for el in (parse(html) if isinstance(html, str) else html).iter():
        name = _local(el.tag)
        if not name:
            continue
        attrs = {_local(k) if not k.startswith("{http://www.w3.org/1999/xlink}") else "xlink:href": v
                 for k, v in el.attrib.items()}
        if name == "script" and (attrs.get("src") not in APP_SCRIPTS or (el.text or "").strip()):
            problems.append(f"<script src={attrs.get('src')!r}>{(el.text or '')[:40]}")
        if name in FORBIDDEN_ELEMENTS:
            problems.append(f"<{name}> element")
        if name == "link" and attrs.get("href") not in APP_LINKS:
            problems.append(f"<link href={attrs.get('href')!r}>")
        if name == "meta" and "http-equiv" in attrs:
            problems.append(f"<meta http-equiv={attrs['http-equiv']!r}>")
        for attr, val in attrs.items():
            if attr.startswith("on"):
                problems.append(f"<{name} {attr}={val[:40]!r}>")
            if attr in URL_ATTRIBUTES and _STRIP.sub("", val).lower().startswith(DANGEROUS_SCHEMES):
                problems.append(f"<{name} {attr}={val[:60]!r}>")
            if attr == "style":
                problems.append(f"<{name} style={val[:40]!r}>")
            if attr.startswith(("hx-", "data-hx-")):
                problem = _htmx_problem(attr.removeprefix("data-"), val, routes)
                if problem:
                    problems.append(f"<{name} {attr}={val[:60]!r}>: {problem}")
    return problems


HX_METHODS = {"hx-get": "GET", "hx-post": "POST", "hx-put": "PUT", "hx-patch": "PATCH",
              "hx-delete": "DELETE"}


def _htmx_problem(attr: str, val: str, routes: Any) -> str | None:
    """htmx acts on its attributes like a browser on ``href``: a request attribute must
    name one of the app's own routes for that method (an injected ``hx-get="/logout"
    hx-trigger="load"`` would not); script-bearing ones must not appear at all."""
    if attr.startswith("hx-on") or attr in ("hx-vars", "hx-eval"):
        return "script-bearing htmx attribute"
    if attr == "hx-vals" and "js:" in val.replace(" ", "").lower():
        return "hx-vals evaluates script"
    if attr == "hx-trigger" and "[" in val:
        return "hx-trigger with a script filter"
    if attr in HX_METHODS:
        if routes is None:
            return None
        path = val.split("?", 1)[0].split("#", 1)[0]
        try:
            endpoint, _ = routes.match(path, method=HX_METHODS[attr])
        except Exception:  # noqa: BLE001 - NotFound / MethodNotAllowed / RequestRedirect
            return "not a route of the app for this method"
        if endpoint not in HX_ENDPOINTS:
            return f"htmx request to {endpoint}, which no page swaps"
    return None


# The endpoints the app's own pages address with htmx.
HX_ENDPOINTS = {"runs.index", "runs.timeline", "runs.tool_call", "runs.verdict", "queue.progress",
                "feedback.rate", "feedback.delete", "triage.index", "triage.assign",
                "triage.state", "triage.bulk", "cases.index"}


def text_and_attributes(html: Any) -> str:
    """Every text node and attribute value of the page (its text or ``parse`` result),
    joined (what a reader or a form field sees); used to prove a field was shown."""
    parts = []
    for el in (parse(html) if isinstance(html, str) else html).iter():
        parts.append(el.text or "")
        parts.append(el.tail or "")
        parts.extend(el.attrib.values())
    return "\n".join(parts)


def tags_in(text: str) -> set[str]:
    return set(re.findall(r"zq\d\dx\d\d", text))


def hx_headers_token(html: str) -> str | None:
    body = parse(html).find("body")
    if body is None or not body.get("hx-headers"):
        return None
    return json.loads(body.get("hx-headers"))["X-CSRFToken"]
