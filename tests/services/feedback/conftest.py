"""Fixtures of the feedback service tests: a workspace, a reviewer in it, their actor."""

from __future__ import annotations

import pytest


@pytest.fixture
def reviewer(make, ws):
    return make.user(ws)


@pytest.fixture
def actor(make, reviewer):
    return make.actor(reviewer)
