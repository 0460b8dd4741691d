"""One FlaskForm per user action (STYLE 5). Services validate everything again."""

from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from wtforms import (
    HiddenField,
    IntegerField,
    PasswordField,
    SearchField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.validators import DataRequired, Length, NumberRange, Optional
from wtforms.widgets import HiddenInput


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])


class EmptyForm(FlaskForm):
    """CSRF only, for button POSTs (logout, assign, resolve ...)."""


# Shape checks for humans only; the services validate everything again (STYLE 5).
_BLANK = ("", "Any")


class RunFilterForm(FlaskForm):
    """The runs list / review queue filters: a GET form, so no CSRF (``meta={"csrf": False}``)
    and the values live in the URL (shareable, back button)."""

    class Meta:
        csrf = False

    q = SearchField("Search", validators=[Optional(), Length(max=200)],
                    render_kw={"placeholder": "Text in the query or answer"})
    workspace = SelectField("Workspace", choices=[_BLANK], validate_choice=False,
                            validators=[Optional()])
    kind = SelectField("Kind", choices=[_BLANK, ("chat", "Chat"), ("aiops", "AIOps")],
                       validators=[Optional()])
    status = SelectField("Status", choices=[_BLANK, ("RUNNING", "Running"),
                                            ("SUCCESS", "Success"), ("FAILED", "Failed")],
                         validators=[Optional()])
    verdict = SelectField("Verifier", choices=[_BLANK, ("PASS", "PASS"),
                                               ("LOW_CONFID", "LOW_CONFID"),
                                               ("REJECT", "REJECT"), ("none", "Not verified")],
                          validators=[Optional()])
    feedback = SelectField("Verdict", choices=[_BLANK, ("useful", "Useful"),
                                               ("not_useful", "Not useful"),
                                               ("none", "No verdict")],
                           validators=[Optional()])
    reviewed = SelectField("Reviewed", choices=[_BLANK, ("not_mine", "Not yet by me"),
                                                ("mine", "Reviewed by me")],
                           validators=[Optional()])
    score_min = IntegerField("Score from", validators=[Optional(), NumberRange(0, 100)],
                             render_kw={"inputmode": "numeric", "placeholder": "0"})
    score_max = IntegerField("Score to", validators=[Optional(), NumberRange(0, 100)],
                             render_kw={"inputmode": "numeric", "placeholder": "100"})
    outcome = StringField("External outcome", validators=[Optional(), Length(max=32)],
                          render_kw={"placeholder": "e.g. pass, fail"})
    sort = SelectField("Sort", choices=[], validators=[Optional()])

    def to_filters(self) -> dict[str, Any]:
        """The filters as keyword arguments for ``services.runs.RunFilters``."""
        workspace = (self.workspace.data or "").strip()
        return {
            "workspace_id": int(workspace) if workspace.isdigit() else None,
            "kind": self.kind.data or None,
            "status": self.status.data or None,
            "verdict": self.verdict.data or None,
            "feedback": self.feedback.data or None,
            "reviewed": self.reviewed.data or None,
            "score_min": self.score_min.data,
            "score_max": self.score_max.data,
            "outcome": (self.outcome.data or "").strip() or None,
            "q": (self.q.data or "").strip() or None,
            "sort": self.sort.data or "newest",
        }


class FeedbackForm(FlaskForm):
    """One thumbs control's submit: rate a target, with reason / comment / correction."""

    target_type = HiddenField(validators=[DataRequired(), Length(max=32)])
    target_id = IntegerField(widget=HiddenInput(), validators=[DataRequired()])
    subject_id = HiddenField(validators=[Optional(), Length(max=160)])
    rating = SelectField("Rating", choices=[("positive", "Helpful"), ("negative", "Not helpful")],
                         validators=[DataRequired()])
    reason = StringField("Reason", validators=[Optional(), Length(max=80)])
    comment = TextAreaField("Comment", validators=[Optional(), Length(max=2000)])
    correction = TextAreaField("Suggested correction", validators=[Optional(), Length(max=4000)])
    next = HiddenField(validators=[Optional(), Length(max=2000)])
