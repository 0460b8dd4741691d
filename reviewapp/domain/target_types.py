"""The feedback target types (SPEC 6.1): what a reviewer can rate, one row each.

Every other place derives from ``TARGET_TYPES``: the ``user_feedback.target_type``
CHECK constraint and the ``TargetType`` enum (models/feedback.py), validation
(domain/feedback.py), the owner check through the target's run
(services/feedback/_targets.py), the thumbs' labels and the export filter's choices,
the CLI's ``--target-type`` choices and the OpenAPI enums (a test compares).

Adding a target type is one row here plus its own code: where its rows come from on the
run page, and (when it is answer-level) how it sets the verdict. A re-ingest keeps the
rated rows of every type by its ``model`` (``codes_of_model``); a new model needs its own
keep rule in ``services/runs/ingest.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import Registry, UnknownValue


@dataclass(frozen=True)
class TargetTypeRow:
    """One target type.

    ``code``: stored in ``user_feedback.target_type``; ``label``: how a control names one
    target ("Rate the answer"); ``noun``: the type in lists and filters; ``model``: the
    name of the model class in ``reviewapp.models`` whose id is the ``target_id``;
    ``parent``: that model's column holding the run's id (how the owner check reaches
    the run and its workspace); ``role``: only rows with this ``role`` are targets (None:
    every row); ``subject``: what ``subject_id`` names, required (None: the type has
    no subject);
    ``answer_level``: a rating of it can be the run's answer rating (it sets the verdict,
    SPEC 6.2); ``key``: the model's column that ``target_id`` matches (its integer id,
    or for a row keyed by a string, the integer column that narrows it, e.g. its run);
    ``subject_column``: when set, the model's column the subject matches in the owner
    check's own query (the subject then completes the row's key); ``part_label``: how
    the triage item and disputes pages name one rated row of the type, ``{part.<column>}``
    reading the row and ``{noun}`` the run's name for the type (``part_noun``; None for a
    type with a subject: its own code names each subject); ``kind_nouns``: (run kind,
    noun) where a run of that kind calls the part otherwise than ``noun`` (an AIOps run's
    answer is its "Conclusion", as its run page heads it).
    """

    code: str
    label: str
    noun: str
    model: str
    parent: str = "run_pk"
    role: str | None = None
    subject: str | None = None
    answer_level: bool = False
    key: str = "id"
    subject_column: str | None = None
    part_label: str | None = None
    kind_nouns: tuple[tuple[str, str], ...] = ()


TARGET_TYPES: Registry[TargetTypeRow] = Registry("target_type", (
    TargetTypeRow("chat_message", "the answer", "Answer", "Message", role="assistant",
                  answer_level=True, part_label="{noun}", kind_nouns=(("aiops", "Conclusion"),)),
    # The subject is one of the message's ``metadata.citations`` ids.
    TargetTypeRow("citation", "this citation", "Citation", "Message", role="assistant",
                  subject="citation id"),
    TargetTypeRow("diagnostic_step", "this step", "Step", "DiagnosticStep",
                  part_label="step {part.ordinal}: {part.name}"),
    TargetTypeRow("diagnostic_report", "the report", "Report", "DiagnosticReport",
                  answer_level=True, part_label="report"),
    # A row of the tool-call audit (SPEC 4). Its key is a string (the agent's call id,
    # unique per workspace) while ``target_id`` is an integer: the target is the call's
    # run (``target_id`` = the run's id) and the subject is the call id, which the owner
    # check matches in the same query. Exports and the eval set thus carry the agent's
    # own call id, and a re-ingest (which never re-keys a call) cannot orphan a rating.
    TargetTypeRow("tool_call", "this tool call", "Tool call", "ToolCall", key="run_pk",
                  subject="tool call id", subject_column="id"),
    # An assistant message that is not the run's answer: a turn of a multi-turn chat
    # (the answer itself is ``chat_message``).
    TargetTypeRow("conversation_turn", "this turn", "Turn", "Message", role="assistant",
                  part_label="conversation turn (message {part.ordinal})"),
))


def part_noun(code: str, run_kind: str) -> str:
    """How a run of ``run_kind`` ("chat", "aiops") names its part of target type ``code``,
    lower case: ``kind_nouns``' noun for that kind, else the type's ``noun`` ("answer" of a
    chat run, "conclusion" of an AIOps run). Raises ``UnknownValue`` for an unknown code."""
    row = TARGET_TYPES.get(code)
    return dict(row.kind_nouns).get(run_kind, row.noun).lower()


def answer_noun(run_kind: str) -> str:
    """How a run of ``run_kind`` names its answer, lower case: ``part_noun`` of the answer
    type ("answer"; "conclusion" for an AIOps run), for headings that name the answer
    before any rating (the run, triage item and disputes pages)."""
    return part_noun("chat_message", run_kind)


def control_label(code: str, run_kind: str) -> str:
    """How a rating control names its target of type ``code`` in a run of ``run_kind``:
    the type's ``label`` ("the answer"), or "the <noun>" where ``kind_nouns`` renames the
    part for that kind ("the conclusion"). Raises ``UnknownValue`` for an unknown code."""
    row = TARGET_TYPES.get(code)
    return f"the {part_noun(code, run_kind)}" if run_kind in dict(row.kind_nouns) else row.label


def subject_types() -> tuple[str, ...]:
    """The codes of the types whose ratings carry a subject."""
    return tuple(row.code for row in TARGET_TYPES if row.subject is not None)


def codes_of_model(model: str, *, whole_row: bool = False) -> tuple[str, ...]:
    """The codes, in table order, whose ``target_id`` is a row id of ``model`` (the name
    of a model class, e.g. ``"Message"``): what a re-ingest must keep when rated (SPEC 10).
    ``whole_row``: only the types that rate the whole row (no subject), whose earlier text
    a changed row keeps in its history. Raises ``UnknownValue`` for a ``model`` no type
    rates by its id (a misspelt name would otherwise keep nothing)."""
    codes = tuple(row.code for row in TARGET_TYPES if row.model == model and row.key == "id"
                  and not (whole_row and row.subject is not None))
    if not codes:
        raise UnknownValue("model", model, tuple(dict.fromkeys(r.model for r in TARGET_TYPES)))
    return codes
