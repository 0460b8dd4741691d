"""One FlaskForm per user action (STYLE 5). Services validate everything again."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from flask_wtf import FlaskForm
from wtforms import (
    BooleanField,
    Field,
    HiddenField,
    IntegerField,
    PasswordField,
    SearchField,
    StringField,
    TextAreaField,
)
from wtforms.validators import (
    AnyOf,
    DataRequired,
    InputRequired,
    Length,
    NumberRange,
    Optional,
    Regexp,
    StopValidation,
)
from wtforms.widgets import HiddenInput

from ..domain.consensus import DISPUTE_RULES
from ..domain.feedback import RATINGS
from ..domain.queues import (
    ASSIGNMENT_MODES,
    NAME_MAX,
    RESERVATION_MAX_MINUTES,
    REVIEWER_SCOPES,
    REVIEWERS_MAX,
    REVIEWERS_MIN,
)
from ..domain.run_vocabulary import RUN_KINDS, RUN_STATUSES
from ..domain.verdicts import VERDICTS, VERIFIER_VERDICTS
from ..errors import ValidationFailed
from ..services.runs import SORTS, RunFilters

F = TypeVar("F", bound=FlaskForm)  # ``validated`` hands back the form it was given


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])


class EmptyForm(FlaskForm):
    """CSRF only, for button POSTs (logout, assign, resolve ...)."""


class CaseForm(FlaskForm):
    """Edit or create a case (SPEC 7); ``version`` is the edited case's version."""

    version = HiddenField()
    title = StringField("Title", validators=[DataRequired(), Length(max=200)])
    fault_category = StringField("Fault category", validators=[Optional(), Length(max=64)])
    error_code = StringField("Error code", validators=[Optional(), Length(max=120)])
    service = StringField("Service", validators=[Optional(), Length(max=120)])
    root_cause = TextAreaField("Root cause", validators=[Optional(), Length(max=20000)])
    solution = TextAreaField("Solution", validators=[Optional(), Length(max=20000)])
    # The edit form's 'Use "X"' buttons (name "accept", value the field proposed): not
    # rendered as an input; read here so no view reads the raw form.
    accept = StringField()

# Shape checks for humans only; the services validate everything again (STYLE 5).
# Selects are rendered from these (value, label) lists by the templates; the fields
# are plain strings checked with AnyOf, which keeps the forms independent of WTForms'
# changing SelectField choice formats.
KIND_CHOICES = RUN_KINDS.choices()
STATUS_CHOICES = RUN_STATUSES.choices()
VERDICT_CHOICES = (*VERIFIER_VERDICTS.choices(), ("none", "Not verified"))
FEEDBACK_CHOICES = (*VERDICTS.choices(), ("none", "No verdict"))
REVIEWED_CHOICES = (("not_mine", "Not yet by me"), ("mine", "Reviewed by me"))


def _values(choices: tuple[tuple[str, str], ...]) -> list[str]:
    return [value for value, _ in choices]


def _one_of(choices: Iterable[tuple[str, str]]) -> AnyOf:
    """``AnyOf`` the choices' values, refusing in the labels a select shows ("choose Pass,
    Low confidence, Reject or Not verified"), not WTForms' "Invalid value, must be one of:
    PASS, LOW_CONFID, ..."; lower case, no period (a list's summary puts it after the label)."""
    pairs = list(choices)
    labels = [label for _, label in pairs]
    listed = f"{', '.join(labels[:-1])} or {labels[-1]}" if len(labels) > 1 else labels[0]
    return AnyOf([value for value, _ in pairs], message=f"choose {listed}")


SCORE_RANGE = "must be between 0 and 100"
SCORE_WHOLE = "must be a whole number between 0 and 100"


class ScoreField(IntegerField):
    """A 0-100 score box whose text that is no whole number gets one message
    (``SCORE_WHOLE``), not IntegerField's "Not a valid integer value." followed by the
    range check's message on the missing value. An empty box (the form always sends both,
    empty when unused) is no filter: ``data`` None, no error, as ``Optional`` expects."""

    def process_formdata(self, valuelist: list[Any]) -> None:
        if valuelist and not str(valuelist[0]).strip():
            self.data = None
            return
        try:
            super().process_formdata(valuelist)
        except ValueError:
            raise ValueError(SCORE_WHOLE) from None

    def pre_validate(self, form: Any) -> None:
        if self.process_errors:
            raise StopValidation()


class WholeNumberField(IntegerField):
    """A number box whose text that is no whole number gets one message naming the field
    and what it wants, from its ``NumberRange`` ("Reservation (minutes) must be a whole
    number between 1 and 240."), not IntegerField's "Not a valid integer value." followed
    by the range's message. An empty box is no value (``data`` None, no error of its own:
    ``InputRequired`` says it is required, ``Optional`` lets it be)."""

    def process_formdata(self, valuelist: list[Any]) -> None:
        if valuelist and not str(valuelist[0]).strip():
            self.data = None
            return
        try:
            super().process_formdata(valuelist)
        except ValueError:
            bounds = next((v for v in self.validators if isinstance(v, NumberRange)), None)
            wanted = f" between {bounds.min} and {bounds.max}" if bounds else ""
            raise ValueError(f"{self.label.text} must be a whole number{wanted}.") from None

    def pre_validate(self, form: Any) -> None:
        if self.process_errors:
            raise StopValidation()


class RunFilterForm(FlaskForm):
    """The runs list / review queue filters: a GET form, so no CSRF (``meta={"csrf": False}``)
    and the values live in the URL (shareable, back button)."""

    class Meta:
        csrf = False

    q = SearchField("Search", validators=[Optional(), Length(max=200)],
                    render_kw={"placeholder": "Query, answer, run or session id, tool calls"})
    # A workspace's number (the select) or its slug (``?workspace=demo``, as the CLI says).
    workspace = StringField("Workspace", validators=[
        Optional(), Regexp(r"^(\d{1,12}|[a-z0-9][a-z0-9-]{0,62})$",
                           message="must be a workspace's number or its short name")])
    kind = StringField("Kind", validators=[Optional(), _one_of(KIND_CHOICES)])
    status = StringField("Status", validators=[Optional(), _one_of(STATUS_CHOICES)])
    verdict = StringField("Verifier", validators=[Optional(), _one_of(VERDICT_CHOICES)])
    feedback = StringField("Verdict", validators=[Optional(), _one_of(FEEDBACK_CHOICES)])
    reviewed = StringField("Reviewed", validators=[Optional(), _one_of(REVIEWED_CHOICES)])
    # The message follows the label in the list's summary ("Score from: must be ..."):
    # lower case, no period of its own (the summary ends the sentence).
    score_min = ScoreField("Score from", validators=[Optional(), NumberRange(0, 100, SCORE_RANGE)])
    score_max = ScoreField("Score to", validators=[Optional(), NumberRange(0, 100, SCORE_RANGE)])
    outcome = StringField("External outcome", validators=[Optional(), Length(max=32)],
                          render_kw={"placeholder": "e.g. pass, fail"})
    # In the page's order (runs/_filter_grid.html): the list's summary names the refused
    # fields in this order and the first takes the focus (``first_invalid``).
    failed_calls = StringField("Has failed tool calls", validators=[
        Optional(), AnyOf(["yes"], message="tick the box or leave it empty")])
    sort = StringField("Sort", validators=[Optional(), _one_of(SORTS.items())])

    FILTER_FIELDS = RunFilters.param_names()  # every field above (a test keeps them equal)
    selects = (
        ("kind", KIND_CHOICES), ("status", STATUS_CHOICES), ("verdict", VERDICT_CHOICES),
        ("feedback", FEEDBACK_CHOICES), ("reviewed", REVIEWED_CHOICES),
    )

    def to_params(self) -> dict[str, str]:
        """The filters that passed the form's checks, as query-string text for
        ``RunFilters.from_params`` (the failed ones are left out: the form shows them)."""
        return {field.name: str(field.data) for field in self
                if field.name in self.FILTER_FIELDS and not field.errors
                and field.data not in (None, "")}


class FeedbackForm(FlaskForm):
    """One thumbs control's submit: rate a target, with reason / comment / correction."""

    target_type = HiddenField(validators=[DataRequired(), Length(max=32)])
    target_id = IntegerField(widget=HiddenInput(), validators=[DataRequired()])
    subject_id = HiddenField(validators=[Optional(), Length(max=160)])
    rating = StringField("Rating", validators=[DataRequired(), AnyOf(list(RATINGS))])
    reason = StringField("Reason", validators=[Optional(), Length(max=80)])
    comment = TextAreaField("Comment", validators=[Optional(), Length(max=2000)])
    correction = TextAreaField("Suggested correction", validators=[Optional(), Length(max=4000)])
    next = HiddenField(validators=[Optional(), Length(max=2000)])
    # "1" from the thumbs buttons, which carry no texts: switch the thumb, keep the
    # comment and correction (services.feedback.upsert_feedback(switch=True)).
    switch = HiddenField(validators=[Optional(), AnyOf(["", "1"])])
    compact = HiddenField(validators=[Optional(), Length(max=1)])  # "1": a timeline row's control
    # The details form: the rating it was shown with (services.feedback.rating_version);
    # a newer save from another tab makes it stale (409).
    based_on = HiddenField(validators=[Optional(), Length(max=40)])


class _ValuesField(Field):
    """Every value sent under the field's name, as a list (a column of checkboxes)."""

    def process_formdata(self, valuelist: list[Any]) -> None:
        self.data = list(valuelist)


class TriageFilterForm(FlaskForm):
    """The triage list's filters: a GET form (no CSRF), the values as typed. The triage
    service parses and checks them (``TriageFilters.from_params``); the form gives each
    a label, so a refused one is shown next to its field and named as the page names it
    (``show_service_error``, as the runs list)."""

    class Meta:
        csrf = False

    workspace = StringField("Workspace")
    state = StringField("State")
    assignee = StringField("Assignee")
    kind = StringField("Kind")
    reason = StringField("Reviewer reason")
    opened = StringField("Opened by")
    score_min = StringField("Score from")
    score_max = StringField("Score to")
    date_from = StringField("Opened from")
    date_to = StringField("Opened to")
    disagreement = StringField("Reviewers disagree")


class CaseFilterForm(FlaskForm):
    """The case list's filters: a GET form (no CSRF), the values as typed, in the page's
    order. The case service parses and checks them (``cases.read_filters``); the form gives
    each a label, so a refused one is shown next to its field and named as the runs and
    triage lists name theirs (``show_service_error``, ``first_invalid``)."""

    class Meta:
        csrf = False

    q = StringField("Text")
    workspace = StringField("Workspace")
    fault_category = StringField("Category")
    service = StringField("Service")
    error_code = StringField("Error code")
    source_type = StringField("Source")


class AuditFilterForm(FlaskForm):
    """The audit log's filter (a GET form, no CSRF) and its page link, as typed: labels for
    a refusal of ``audit.read_filters`` (``show_service_error``)."""

    class Meta:
        csrf = False

    action = StringField("Action")
    cursor = HiddenField("Page link")


class TriageActionForm(FlaskForm):
    """One triage item action (assign, categorise, note, move): the ``version`` the page
    showed and the changed field; the triage service validates each (SPEC 8, 10)."""

    version = HiddenField()
    assignee_id = StringField("Assignee")
    fault_category = StringField("Fault category")
    note = TextAreaField("Note")
    state = StringField("State")
    next = HiddenField()
    proposal = HiddenField()  # "1": the category is the page's proposal, nothing typed


class TriageBulkForm(FlaskForm):
    """A bulk action on the selected items (``"<id>:<version>"`` each): assign or move."""

    items = _ValuesField()
    action = StringField("Action")
    assignee_id = StringField("Assignee")
    state = StringField("State")
    next = HiddenField()


def show_service_error(form: FlaskForm, error: Any) -> bool:
    """Put a service's ``ValidationFailed`` next to the form fields it names, each of its
    ``problems`` beside its own (``a.b`` names field ``a``), keeping what was typed; False,
    and nothing shown, when the form lacks one of them (the caller then lets the error
    answer as a page of its own)."""
    problems = getattr(error, "problems", None) or {error.field: error.reason}
    names = {path: (path or "").split(".")[0] for path in problems}
    if not all(name and name in form for name in names.values()):
        return False
    for path, reason in problems.items():
        field = form[names[path]]
        field.errors = [*field.errors, reason]
    return True


def validated(form: F) -> F:
    """``form`` (a button's form: the queue pages', the next-item one) when it validates;
    else ``ValidationFailed`` naming its first refused field, the CSRF token first (a 400 page of its own: these are buttons on other
    pages, with no form of their own to show again), in plain words: the page shows
    its ``message`` (a sentence, or the field's label and the reason), no field code."""
    if not form.validate():
        if form.meta.csrf and form.csrf_token.errors:
            raise ValidationFailed.worded("csrf_token", "the form expired; reload the page",
                                          "This form expired: reload the page and try again.")
        name, field = next((name, field) for name, field in form._fields.items() if field.errors)
        reason = field.errors[0]
        raise ValidationFailed.worded(name, reason, reason if reason[:1].isupper()
                                      else f"{field.label.text}: {reason.rstrip('.')}.")
    return form


def int_or_none(value: Any) -> int | None:
    """``value`` as an ``int`` (a hidden field's or a kept session value), ``None`` when it is none."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def first_invalid(form: FlaskForm) -> str | None:
    """The name of ``form``'s first field with an error, in the form's order (a filter
    form's fields are declared in its page's order): the field a refused form focuses
    (``autofocus``, as the queue forms)."""
    return next((field.name for field in form if field.errors), None)


# --- admin and own account (SPEC 8). Role values come from the Role enum.
_ROLE_VALUES = ["reviewer", "lead", "admin"]


class AddMemberForm(FlaskForm):
    """Give an existing account a role in the workspace."""

    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    role = StringField("Role", validators=[AnyOf(_ROLE_VALUES)])


class NewAccountForm(FlaskForm):
    """Create an account in the workspace; an empty password is generated."""

    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    role = StringField("Role", validators=[AnyOf(_ROLE_VALUES)])
    password = PasswordField("One-time password (empty: generate one)",
                             validators=[Optional(), Length(max=200)])


class RoleForm(FlaskForm):
    role = StringField("Role", validators=[AnyOf(_ROLE_VALUES)])


class ActiveForm(FlaskForm):
    active = StringField("Active", validators=[AnyOf(["0", "1"])])


class ConfirmForm(FlaskForm):
    """A destructive action's own confirmation button: ``confirm=1`` (anything else asks)."""

    confirm = StringField("Confirm", validators=[Optional()])


class ResetPasswordForm(FlaskForm):
    password = PasswordField("One-time password (empty: generate one)",
                             validators=[Optional(), Length(max=200)])


class TokenForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=120)])


def settings_form(settings: Iterable[Any]) -> FlaskForm:
    """The workspace settings form (SPEC 8): the ``version`` the page showed and one text
    field per row of ``settings`` (``domain.workspace_settings.SETTINGS``: a new setting
    is a registry row, not a form change); an unchecked checkbox sends nothing. The
    settings service validates every value."""
    fields = {"version": HiddenField(), **{row.code: StringField(row.label) for row in settings}}
    return type("SettingsForm", (FlaskForm,), fields)()


class WorkspaceForm(FlaskForm):
    slug = StringField("Slug", validators=[DataRequired(), Length(max=63)])
    name = StringField("Name", validators=[DataRequired(), Length(max=200)])


class RenameWorkspaceForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=200)])


class PasswordChangeForm(FlaskForm):
    """The user's own password: the current one, the new one twice."""

    current_password = PasswordField("Current password", validators=[DataRequired(), Length(max=200)])
    new_password = PasswordField("New password", validators=[DataRequired(), Length(min=8, max=200)])
    confirm = PasswordField("New password again", validators=[DataRequired(), Length(max=200)])


class DecisionForm(FlaskForm):
    """A lead's decision on a disputed run (issue 16): the verdict and an optional note;
    the adjudication service validates both (naming the field)."""

    verdict = StringField("Verdict")
    note = TextAreaField("Note")
    decision = HiddenField()  # the latest decision the page showed ("": none; 409 if stale)
    next = HiddenField()


class QueueForm(FlaskForm):
    """Create or edit a review queue (issue 16): its name, the rule built from the runs
    list's filters, sampling, reviewers per run, blind, reservation, who may review
    (``named``: the checked user ids, as text; the service checks each) and assignment."""

    workspace = StringField("Workspace", validators=[DataRequired(), Regexp(r"^\d{1,12}$")])
    name = StringField("Name", validators=[DataRequired(), Length(max=NAME_MAX)])
    kind = StringField("Kind", validators=[Optional(), _one_of(KIND_CHOICES)])
    status = StringField("Status", validators=[Optional(), _one_of(STATUS_CHOICES)])
    verdict = StringField("Verifier verdict", validators=[Optional(), _one_of(VERDICT_CHOICES)])
    feedback = StringField("Reviewers' verdict", validators=[Optional(), _one_of(FEEDBACK_CHOICES)])
    score_min = WholeNumberField("Evidence score from", validators=[Optional(), NumberRange(0, 100)])
    score_max = WholeNumberField("Evidence score to", validators=[Optional(), NumberRange(0, 100)])
    outcome = StringField("External outcome", validators=[Optional(), Length(max=32)],
                          render_kw={"placeholder": "e.g. pass, fail"})
    failed_calls = StringField("Has failed tool calls", validators=[Optional(), AnyOf(["yes"])])
    q = StringField("Text", validators=[Optional(), Length(max=200)],
                    render_kw={"placeholder": "Words in the query, answer or tool calls"})
    sample_percent = WholeNumberField("Sample (% of matching runs)",
                                  validators=[InputRequired(), NumberRange(1, 100)])
    reviewers_per_run = WholeNumberField("Reviewers per run", validators=[
        InputRequired(), NumberRange(REVIEWERS_MIN, REVIEWERS_MAX)])
    blind = BooleanField("Blind review: reviewers see no other rating until they have rated")
    reservation_minutes = WholeNumberField("Reservation (minutes)", validators=[
        InputRequired(), NumberRange(1, RESERVATION_MAX_MINUTES)])
    reviewers = StringField("Who may review", validators=[AnyOf(list(REVIEWER_SCOPES))])
    assignment = StringField("Assignment", validators=[AnyOf(list(ASSIGNMENT_MODES))])
    dispute_rule = StringField("When reviewers disagree", validators=[
        Optional(), AnyOf(list(DISPUTE_RULES.codes()))])
    named = _ValuesField("Named reviewers")


class QueueItemForm(FlaskForm):
    """A lead's button on a queue item (remove, assign): ``assignees`` the chosen user ids
    (empty values dropped; the service checks each), ``cursor`` the items page to come
    back to (the service refuses a bad one when that page is read), ``confirm`` "1" when
    a removal was confirmed."""

    assignees = _ValuesField("Assign to")
    cursor = HiddenField()
    confirm = HiddenField()  # Remove: "1" from the question's own button (else it asks)


class AddRunsForm(FlaskForm):
    """Bulk "Add to queue" from the runs list: the queue, the checked runs (ids as text;
    the service checks each) and the list page to come back to."""

    queue = StringField("Queue", validators=[InputRequired(
        message="Choose the queue to add the checked runs to.")])
    runs = _ValuesField("Runs", validators=[DataRequired(
        message="Nothing was added: check at least one run to add to the queue.")])
    next = HiddenField()


class NextItemForm(FlaskForm):
    """"Open my next item": ``queue`` (empty: across my queues); ``skip`` ("Skip") or
    ``leaving`` ("Next item" on an item's page), the item to release first. Values that are
    not ids read as absent, as they always have."""

    queue = HiddenField()
    skip = HiddenField()
    leaving = HiddenField()
