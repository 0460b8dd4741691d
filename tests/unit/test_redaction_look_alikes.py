"""Spaces, combining marks, look-alike letters and split secret words inside a secret
(SPEC 4; module doc of ``domain.encoded_text``), found by a new user in session 7: a
no-break space (or another Zs space) inside a token, a combining accent on one of its
letters, Cyrillic / Greek letters in its prefix (``ghр_`` with a Cyrillic ``р``), a blank
inside a secret word of a name (``{"pass word": V}``). Ordinary multilingual prose
(Russian, Ukrainian, Greek, Chinese, Vietnamese, French spacing) and the real agent
data stay as they are. The leak counts over the whole corpus are in
``tests/unit/test_redaction_disguised.py`` (``DISGUISES``)."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from reviewapp.domain import encoded_text
from reviewapp.domain.redaction import iter_strings
from reviewapp.services.secret_scan import redact_text
from tests.shared_data import shared_data_dir

R = "[redacted]"
BODY = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH = f"ghp_{BODY}"
SK = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s"


@pytest.mark.parametrize("space", encoded_text.WIDE_SPACES)
@pytest.mark.parametrize("where", [2, 4, 10])  # in the prefix, after "_", in the body
def test_a_wide_space_inside_a_token_hides_nothing(space, where):
    assert redact_text(f"see {GH[:where]}{space}{GH[where:]} now") == f"see {R} now"


def test_the_wide_spaces_are_the_zs_spaces_but_the_ascii_one():
    assert set(encoded_text.WIDE_SPACES) == {chr(c) for c in range(0x110000)
                                             if unicodedata.category(chr(c)) == "Zs"} - {" "}


@pytest.mark.parametrize(("text", "expected"), [
    # A wide space as a blank still separates a label from its value (the first view).
    ("token\u00a0hunter2hunter3 ok", f"token\u00a0{R} ok"),
    ("tool login --password\u2009Fl4gPw99 --verbose", f"tool login --password\u2009{R} --verbose"),
    # (the joined view reads "Authorization:Bearerabc...": the blank after ":" goes too)
    ("Authorization:\u00a0Bearer\u00a0abc123.def456-ghi789_jklmno0pqr", f"Authorization:{R}"),
    # Several spaces, and one written as a reference the page decodes.
    (f"ghp\u00a0_{BODY[:5]}\u3000{BODY[5:20]}\u202f{BODY[20:]}.", f"{R}."),
    (f"ghp_{BODY[:5]}&nbsp;{BODY[5:]}", R),
    (f"x=1 ghp_{BODY[:5]}%C2%A0{BODY[5:]}", f"x=1 {R}"),
])
def test_wide_spaces_as_blanks_and_inside_tokens(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("mark", ["\u0301", "\u0300", "\u0308", "\u0323", "\u0338", "\u20d2", "\u0610"])
@pytest.mark.parametrize("where", [1, 3, 12])
def test_a_combining_mark_inside_a_token_hides_nothing(mark, where):
    assert redact_text(f"see {GH[:where]}{mark}{GH[where:]} now") == f"see {R} now"


@pytest.mark.parametrize(("text", "expected"), [
    (f"ghр_{BODY}", R),                             # Cyrillic er
    (f"gһp_{BODY}", R),                             # Cyrillic shha
    (f"ghρ_{BODY}", R),                             # Greek rho
    ("ѕk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s", R),   # Cyrillic dze
    ("key ѕк-" + SK[3:], "key ѕк-" + SK[3:]),        # Cyrillic ka is no "k" (TR39): no prefix
    ("АКІАQ7F2LM9XZR4TY8WP", R),                     # Cyrillic capitals A, K, I: "I" not "l"
    ("ΑΚΙΑQ7F2LM9XZR4TY8WP", R),                     # Greek capitals
    ("раѕѕwоrd=hunter2hunter2", f"раѕѕwоrd={R}"),   # a label of look-alikes
    ("хохb-123456789012-AbCdEfGhIjKl ok", f"{R} ok"),
])
def test_look_alike_letters_in_a_prefix(text, expected):
    assert redact_text(text) == expected


def test_the_look_alike_table_is_unicodes_confusables():
    """Every Cyrillic / Greek / IPA Extensions letter whose TR39 prototype (the pinned copy of Unicode's
    confusables.txt in ``confusable-homoglyphs``) is one ASCII letter, and nothing else;
    a capital whose prototype is "l" is read as "I"."""
    confusables = pytest.importorskip("confusable_homoglyphs.confusables").confusables_data
    expected = {}
    for code in (c for low, high in encoded_text.LOOK_ALIKE_BLOCKS for c in range(low, high)):
        char = chr(code)
        latin = [h["c"] for h in confusables.get(char, []) if len(h["c"]) == 1 and h["c"].isascii()
                 and h["c"].isalpha()]
        if unicodedata.category(char).startswith("L") and latin:
            expected[char] = "I" if latin[0] == "l" and char.isupper() else latin[0]
    assert encoded_text._LOOK_ALIKES == expected
    table = encoded_text.character_table()
    assert {chr(c): table[c] for c in map(ord, expected)} == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('{"pass word": "hunter2"}', f'{{"pass word": "{R}"}}'),
    ('{"Pass-Phrase": "open sesame"}', f'{{"Pass-Phrase": "{R}"}}'),
    ("DB_PASS_WORD=correct-horse-42", f"DB_PASS_WORD={R}"),
    ("db.pass.word: y4mlS3cret", f"db.pass.word: {R}"),
    # Prose around the words stays: no separator and value after them.
    ("You pass word lists to the tool; a pass phrase is longer than a password.", None),
    ("the pass word: see the vault", f"the pass word: {R} the vault"),
])
def test_a_blank_or_separator_inside_pass_word(text, expected):
    assert redact_text(text) == (text if expected is None else expected)


MULTILINGUAL = [
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Пароль от Wi\u2011Fi спросите у администратора.",
    "Привет! Сервер ответил: «ошибка 503», повторите запрос через 5\u00a0минут. Токен доступа истёк.",
    "Ударе́ние: замо́к и за́мок, мука́ и му́ка — разные слова́.",
    "ХОРОШО, ОК: СЕРВЕР ВЕРНУЛ ОТВЕТ. РЕСТАРТ ВЫПОЛНЕН. СССР, США, ООО «Ромашка», РЕЕСТР-2024-000123",
    "хохо-хохо-хохо-хохо! ахаха-ахаха-ахаха-ахаха, ох-ох-ох-ох-ох-ох",
    "Ключ API: см. документацию; секрет: не скажу; пароль: ******; ключ=значение, токен=abc",
    "Українська: Київ, їжак, ґанок, Іван і Ірина; Беларуская: Іван, ў; Српски: Јован, Ѕвезда, ѕид",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Κωδικός πρόσβασης: λάθος.",
    "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ αβγδεζηθικλμνξοπρστυφχψω ΑΚΙΑ ΡΟΡΟΡΟΡΟΡΟΡΟΡΟΡΟΡΟΡΟ",
    "中文：测试，全角（括号）和「引号」；日本語のテキスト。한국어 텍스트 — 令牌已过期，请重新登录。",
    "中文\u3000全角空格\u3000分隔\u3000的\u3000文本，密码\u3000错误",
    "Bonjour\u00a0! Le mot de passe\u00a0: voir le coffre. 10\u202f000\u00a0€, «\u00a0citation\u00a0»",
    "Tiếng Việt có dấu: Xin chào thế giới, mật khẩu là bí mật. Vie\u0302\u0323t Nam, cafe\u0301, nai\u0308ve",
    "हिन्दी पाठ में मात्राएँ होती हैं; العربية مَرْحَبًا بِكُمْ; עִבְרִית; ภาษาไทย กำลังโหลด",
    "Zalgo t\u0336\u0337e\u0338x\u0335t\u0334 and e\u0301\u0302\u0303\u0304\u0305 marks",
]


@pytest.mark.parametrize("text", MULTILINGUAL)
def test_multilingual_prose_is_unchanged(text):
    assert redact_text(text) == text


def test_a_laugh_of_look_alikes_is_prose_but_a_token_keeps_its_own_letters():
    assert encoded_text.look_alikes_only("хохо-хохо-хохо".encode())
    assert not encoded_text.look_alikes_only("хохb-1234".encode())
    assert not encoded_text.look_alikes_only("ｘｏｘｂ-ｘｘｘ".encode())  # full-width: its own letters
    assert not encoded_text.look_alikes_only(b"plain-ascii")
    assert not encoded_text.look_alikes_only("中文".encode())


def _real_strings():
    root = shared_data_dir()
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".json", ".jsonl", ".txt"):
            continue
        raw = path.read_text("utf-8")
        if path.suffix == ".json":
            yield path, list(iter_strings(json.loads(raw)))
            continue
        lines = raw.split("\n")
        if path.suffix == ".jsonl":
            docs = []
            for line in lines:
                try:
                    docs.append(json.loads(line))
                except ValueError:
                    docs.append(line)
            lines = list(iter_strings(docs))
        yield path, lines


# What redaction changes in the real data (67,364 texts), the same before and after the
# session 7 views: session ids, Kubernetes names after "key:" / "topologyKey:", a boolean
# (over-redaction that was there before; none of it comes from the decoded views).
_REAL_CHANGES = {'"sessionID"', '"key"', "topologyKey", 'serviceAccountToken"'}
_LABELLED = re.compile(r'("sessionID"|"key"|topologyKey|serviceAccountToken"): ?"?\[redacted\]')


def test_the_real_agent_data_changes_only_where_it_did_before():
    changed = []
    for path, texts in _real_strings():
        for text, out in zip(texts, [redact_text(t) for t in texts], strict=True):
            if out != text:
                changed.append((path.name, text, out))
    assert len(changed) == 4
    for name, _text, out in changed:
        labels = _LABELLED.findall(out)
        assert labels and set(labels) <= _REAL_CHANGES and len(labels) == out.count(R), (name, labels)
