"""Fixtures the page tests share (``tests/conftest.py`` holds the app, the client, ``make``
and ``login``)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role


@pytest.fixture
def lead_workspace(make, login):
    """A fresh workspace with a lead logged in on the test client; returns the workspace.
    (Modules that define their own ``lead`` fixture log in other roles or return more.)"""
    ws = make.workspace()
    user = make.user(ws, Role.LEAD)
    login(user)
    return ws
