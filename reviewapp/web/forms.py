"""One FlaskForm per user action (STYLE 5). Services validate everything again."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional


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
