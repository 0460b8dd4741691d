"""Exports (admin): the export page and the streamed CSV / JSONL downloads (SPEC 8)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flask import Blueprint, Response, make_response, render_template, request
from flask_login import login_required

from ..domain import export_format
from ..domain.case_sources import CASE_SOURCES
from ..errors import ValidationFailed
from ..extensions import db
from ..services import exports
from .auth import current_actor
from .responses import attachment

bp = Blueprint("exports", __name__, url_prefix="/exports")


@dataclass(frozen=True)
class ExportForm:
    """The filter fields of one export form: ``fields`` maps each query-string parameter
    to (element id, the label the form shows). The template renders every ``<label>`` and
    id from here, and a refusal names the fields by the same labels (``refusal``)."""

    prefix: str
    fields: dict[str, tuple[str, str]]

    @property
    def error_id(self) -> str:
        """The id of the form's error note (the ``aria-describedby`` of its refused fields)."""
        return f"{self.prefix}-error"

    def id(self, name: str) -> str:
        """The element id of the field of parameter ``name``."""
        return self.fields[name][0]

    def label(self, name: str) -> str:
        """The label the form shows for parameter ``name``."""
        return self.fields[name][1]


def _form(prefix: str, *rows: tuple[str, str, str]) -> ExportForm:
    """(parameter, id suffix, label) rows, the workspace select first in every form."""
    return ExportForm(prefix, {name: (f"{prefix}-{suffix}", label) for name, suffix, label
                               in (("workspace", "ws", "Workspace"), *rows)})


# Each export kind's form (exports/index.html), the filters of ``services.exports``.
FORMS: dict[str, ExportForm] = {
    "cases": _form("xc", ("q", "q", "Text"), ("fault_category", "cat", "Category"),
                   ("service", "svc", "Service"), ("error_code", "code", "Error code"),
                   ("source_type", "src", "Source")),
    "feedback": _form("xf", ("date_from", "from", "Created from"), ("date_to", "to", "to"),
                      ("rating", "rating", "Rating"), ("target_type", "target", "Part"),
                      ("reason", "reason", "Reason"), ("kind", "kind", "Run kind")),
    "decisions": _form("xd", ("date_from", "from", "Decided from"), ("date_to", "to", "to")),
    "evalset": _form("xe"),
}


# How a refusal's reason that reads on from its field's label starts; any other (the
# workspace's "you have no workspace 'x'") follows the label after a colon.
PREDICATES = ("must", "at most")


@dataclass(frozen=True)
class Refusal:
    """A refused export as its form shows it: ``message`` names the fields by their labels
    ("Created from" must not be after "to".), ``invalid`` the parameters of the fields to
    mark, in form order (the first takes the focus)."""

    message: str
    invalid: tuple[str, ...] = field(default=())


def refusal(error: ValidationFailed, kind: str | None) -> Refusal:
    """``error`` in the words of ``kind``'s form: each refused parameter the form has is
    its quoted label, and so is every other field of the form its reason names (the other
    end of a reversed range, which is marked too); a parameter the form lacks (a hand-made
    URL) keeps its name. No form (an unknown kind): the service's message as it is."""
    form = FORMS.get(kind or "")
    if form is None:
        return Refusal(error.message)
    names = re.compile(r"\b(" + "|".join(map(re.escape, form.fields)) + r")\b")
    invalid: set[str] = set()
    parts = []
    for name, reason in error.problems.items():
        named = set(names.findall(reason)) - {name}  # "workspace" in "must be a workspace id"
        worded = names.sub(lambda m, own=name: m[0] if m[0] == own else f'"{form.label(m[0])}"', reason)
        if name in form.fields:
            invalid.update({name, *named})
            # "Rating" must be one of ...; "Workspace": you have no workspace 'x' (a sentence of its own)
            parts.append(f'"{form.label(name)}"{"" if reason.startswith(PREDICATES) else ":"} {worded}')
        else:
            parts.append(f"{name}: {worded}")
    return Refusal("; ".join(parts) + ".", tuple(n for n in form.fields if n in invalid))


@bp.get("/")
@login_required
def index() -> str:
    """The export forms: cases, feedback, eval set."""
    return _page()


def _page(error: Refusal | None = None, kind: str | None = None) -> str:
    """The export forms filled from the query string; after a refused export of ``kind``,
    only that kind's form, with ``error`` in its card and its fields marked."""
    return render_template("exports/index.html",
                           options=exports.export_options(db.session, current_actor()),
                           params=request.args, source_types=CASE_SOURCES.choices(), error=error,
                           failed=kind, forms=FORMS)


@bp.get("/<kind>.<fmt>")
@login_required
def download(kind: str, fmt: str) -> Response:
    """Stream one export; access and filters are checked before the first byte. A refused
    filter answers 400 with the export page: the field named, the choices kept."""
    try:
        stream = exports.open_export(db.session, current_actor(), kind, request.args, fmt)
    except ValidationFailed as refused:
        db.session.rollback()
        known = kind if kind in exports.KINDS else None
        return make_response(_page(refusal(refused, known), known), 400)
    chunks = export_format.chunks(fmt, stream.columns, stream.rows,
                                  bom=request.args.get("bom") in ("1", "true", "on"))
    return attachment(chunks, kind, fmt, {"X-Export-Rows": str(stream.total)})
