import pytest

# The shared table tests' asserts show both sides on failure, as a test module's do.
pytest.register_assert_rewrite("tests.unit.redaction_cases")
