"""The shape every vocabulary registry shares (target types, verdicts, verifier verdicts,
feedback reasons): an ordered table of rows, one per code, from which every other place
derives its list — CHECK constraints, form and CLI choices, OpenAPI enums (a test
compares), template labels. Pure: stdlib only.

A code the table does not hold raises ``UnknownValue`` instead of falling through to a
default.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, Protocol, TypeVar


class UnknownValue(ValueError):
    """``value`` is not a code of the vocabulary ``name``; ``allowed`` lists the codes."""

    def __init__(self, name: str, value: object, allowed: tuple[str, ...]) -> None:
        super().__init__(f"{name}: {value!r} is not one of {', '.join(allowed)}")
        self.name = name
        self.value = value
        self.allowed = allowed


class Row(Protocol):
    @property
    def code(self) -> str: ...

    @property
    def label(self) -> str: ...


R = TypeVar("R", bound=Row)


class Registry(Generic[R]):
    """An ordered, read-only table of ``rows`` keyed by their ``code``.

    ``name`` is the field the codes are stored in (for error messages). Raises
    ``ValueError`` at import when two rows share a code.
    """

    def __init__(self, name: str, rows: Iterable[R]) -> None:
        self.name = name
        self._rows: dict[str, R] = {}
        for row in rows:
            if row.code in self._rows:
                raise ValueError(f"{name}: code {row.code!r} listed twice")
            self._rows[row.code] = row

    def __iter__(self) -> Iterator[R]:
        return iter(self._rows.values())

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, code: object) -> bool:
        return isinstance(code, str) and code in self._rows

    def get(self, code: object) -> R:
        """The row of ``code``. Raises ``UnknownValue`` for any other value."""
        if isinstance(code, str) and code in self._rows:
            return self._rows[code]
        raise UnknownValue(self.name, code, self.codes())

    def codes(self) -> tuple[str, ...]:
        """Every code, in table order (what CHECK constraints and enums list)."""
        return tuple(self._rows)

    def label(self, code: object) -> str:
        """The label people read for ``code``. Raises ``UnknownValue``."""
        return self.get(code).label

    def label_or_code(self, code: str | None) -> str:
        """The label of ``code``, or ``code`` itself ("" for ``None``) when it is not in the
        registry (a value kept from an older vocabulary, e.g. a dropped fault category)."""
        return self.label(code) if code in self else (code or "")

    def choices(self) -> tuple[tuple[str, str], ...]:
        """(code, label) pairs in table order, for selects and form validation."""
        return tuple((row.code, row.label) for row in self._rows.values())

    def check_covered(self, table: Iterable[str], owner: str, *, every: bool = True) -> None:
        """Raise ``ValueError`` (at import, where ``owner`` builds ``table``) unless the
        codes ``table`` is keyed by are exactly this registry's: a table of one behaviour
        per code (``owner`` names it) then cannot miss a new code, nor keep a dropped one.
        ``every=False``: a table of the codes that behave differently (the others take a
        default) need not list every code, but may hold no other key (a misspelt one)."""
        keys = set(table)
        missing = [code for code in self._rows if code not in keys] if every else []
        extra = sorted(keys - set(self._rows))
        if missing or extra:
            raise ValueError(f"{owner}: {self.name} codes missing {missing}, unknown {extra}")

    def sql_in(self) -> str:
        """``('a', 'b')``: the codes as a SQL list for a CHECK constraint."""
        return repr(self.codes()) if len(self) != 1 else f"({self.codes()[0]!r})"
