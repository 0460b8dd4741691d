"""CSV / JSONL serialisation: exact round trip of mixed scripts, BOM, chunking (SPEC 8, 10)."""

from __future__ import annotations

import csv
import io
import json

from reviewapp.domain.export_format import BOM, chunks, csv_chunks, jsonl_chunks

MIXED = [
    {"id": 1, "text": "数据库连接池耗尽，订单服务 p99 延迟升高", "note": "第一行\n第二行"},
    {"id": 2, "text": "Rollback done 🚀🔥 — 👍🏽 family: 👨‍👩‍👧", "note": "tab\there, quote \" and comma ,"},
    {"id": 3, "text": "הפריסה נכשלה בשרת", "note": "مرحبا بالعالم\r\nsecond line"},
    {"id": 4, "text": "mixed: ascii, 日本語, עברית, 🙂", "note": "line\u2028separator and nul-free"},
    {"id": 5, "text": None, "note": ""},
]


def test_csv_round_trip_with_cjk_emoji_rtl_and_newlines():
    text = "".join(csv_chunks(["id", "text", "note"], MIXED))
    parsed = list(csv.DictReader(io.StringIO(text, newline="")))
    expected = [{"id": str(r["id"]), "text": r["text"] or "", "note": r["note"]} for r in MIXED]
    assert parsed == expected


def test_jsonl_round_trip_is_exact():
    text = "".join(jsonl_chunks(MIXED))
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == len(MIXED) + 1
    assert [json.loads(line) for line in lines[:-1]] == MIXED
    assert "数据库" in text and "🚀" in text  # UTF-8, not \u escapes


def test_bytes_round_trip_through_utf8():
    data = "".join(csv_chunks(["id", "text", "note"], MIXED, bom=True)).encode("utf-8")
    assert data.startswith(b"\xef\xbb\xbf")
    parsed = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert [p["text"] for p in parsed] == [r["text"] or "" for r in MIXED]


def test_bom_only_when_asked():
    assert not "".join(csv_chunks(["a"], [{"a": 1}])).startswith(BOM)
    assert "".join(csv_chunks(["a"], [{"a": 1}], bom=True)).startswith(BOM + "a\r\n")


def test_chunking_does_not_change_the_text():
    rows = [{"id": i, "text": f"行 {i} " * (i % 7)} for i in range(500)]
    small = "".join(csv_chunks(["id", "text"], rows, chunk_chars=50))
    whole = "".join(csv_chunks(["id", "text"], rows, chunk_chars=10**9))
    assert small == whole
    assert len(list(csv_chunks(["id", "text"], rows, chunk_chars=50))) > 10
    assert "".join(jsonl_chunks(rows, chunk_chars=10)) == "".join(jsonl_chunks(rows, chunk_chars=10**9))


def test_header_only_when_there_are_no_rows():
    assert "".join(chunks("csv", ["a", "b"], [])) == "a,b\r\n"
    assert "".join(chunks("jsonl", ["a", "b"], [])) == ""


def test_unknown_format_is_refused():
    import pytest

    with pytest.raises(ValueError):
        chunks("xlsx", ["a"], [])


def test_the_error_for_an_unknown_format_names_both():
    import pytest

    with pytest.raises(ValueError, match=r"^format must be one of csv, jsonl$"):
        chunks("xlsx", ["a"], [])


def test_the_bom_is_the_one_character_u_feff():
    assert "".join(csv_chunks(["a"], [{"a": 1}], bom=True)) == "\ufeffa\r\n1\r\n"


# A chunk is yielded as soon as it holds 64 KiB = 65,536 characters or more (by hand:
# 64 * 1024), never before.
KIB64 = 65_536


def test_a_csv_chunk_ends_at_the_row_that_reaches_64_kib():
    # The header "a\r\n" is 3 characters, a row "x...x\r\n" n + 2.
    exactly = [{"a": "x" * (KIB64 - 5)}, {"a": "y"}]
    assert [len(c) for c in csv_chunks(["a"], exactly)] == [KIB64, 3]
    one_short = [{"a": "x" * (KIB64 - 6)}, {"a": "y"}]
    assert [len(c) for c in csv_chunks(["a"], one_short)] == [KIB64 - 1 + 3]


def _line(length: int) -> dict:
    return {"a": "x" * (length - len('{"a":""}\n'))}


def test_a_jsonl_chunk_ends_at_the_line_that_reaches_64_kib_and_the_count_restarts():
    lines = [_line(n) for n in (KIB64, KIB64 - 1, 10, KIB64, 10)]
    got = list(jsonl_chunks(lines))
    assert [len(c) for c in got] == [KIB64, KIB64 - 1 + 10, KIB64, 10]
    assert "".join(got) == "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines)
    assert [len(c) for c in jsonl_chunks([_line(KIB64 - 1), _line(10)])] == [KIB64 - 1 + 10]
