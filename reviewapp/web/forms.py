"""One FlaskForm per user action (STYLE 5). Services validate everything again."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired, Length


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=80)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])


class EmptyForm(FlaskForm):
    """CSRF only, for button POSTs (logout, assign, resolve ...)."""
