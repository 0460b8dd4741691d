"""Secrets disguised as a Markdown renderer or a browser undoes are redacted (SPEC 4;
module doc of ``domain.encoded_text``): a Markdown backslash escape (``ghp\\_...``), an
HTML character reference (``ghp&#95;...``, ``&#x5f;``, ``&lowbar;``), a JSON ``\\u005f``
escape, an invisible character inside the secret (soft hyphen, direction marks, tags,
variation selectors ...) or full-width letters (``ｇｈｐ_...``). The run page renders
answers as Markdown, which decodes the first two: what it shows from a stored (redacted)
text must hold nothing the redactor would still find. Ordinary text with escapes,
entities, emoji, marks and CJK stays as it is. Runs the pipeline the services use
(``services.secret_scan``: the rules on RE2)."""

from __future__ import annotations

import base64
import html
import re
import unicodedata
from html.entities import html5

import pytest

from reviewapp.domain import encoded_text
from reviewapp.services import secret_scan
from reviewapp.services.secret_scan import redact_text
from reviewapp.web.markdown import render_markdown
from tests.secret_corpus import NOT_ASCII_IN_BASE64, ORDINARY, SECRETS

R = "[redacted]"
GH_BODY = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # the new user's test token's body
GH = f"ghp_{GH_BODY}"
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# An HTML5 name (with its semicolon) for each ASCII punctuation character that has one.
_NAMED = {}
for _name, _value in sorted(html5.items()):
    if _name.endswith(";") and len(_value) == 1 and _value in _PUNCTUATION:
        _NAMED.setdefault(_value, _name)


def _each_punctuation(form):
    return lambda text: "".join(form(c) if c in _PUNCTUATION else c for c in text)


# Latin letters and a look-alike a reader takes for them (Unicode's confusables, TR39).
CYRILLIC = dict(zip("aceopxysijhdqwABCEHKMOPTXYSIJ", "асеорхуѕіјһԁԛԝАВСЕНКМОРТХҮЅІЈ", strict=True))
GREEK = dict(zip("aopviuABEHIKMNOPTXYZ", "αορνιυΑΒΕΗΙΚΜΝΟΡΤΧΥΖ", strict=True))
_LATIN_OF = {ord(v): k for alphabet in (CYRILLIC, GREEK) for k, v in alphabet.items()}
_SPLIT_WORDS = re.compile(r"(?i)(pass)(word|phrase)")


def _looks_alike(text: str, alphabet: dict[str, str]) -> str:
    """The first three letters of every word (a token's prefix) as their look-alikes."""
    return re.sub(r"[A-Za-z0-9]+", lambda m: "".join(alphabet.get(c, c) for c in m[0][:3]) + m[0][3:], text)


def _spliced(mark: str):
    """``mark`` put in the middle of every run of letters and digits of 6 or more."""
    return lambda text: re.sub(r"[A-Za-z0-9]{6,}", lambda m: m[0][:3] + mark + m[0][3:], text)


# Disguises a reader undoes (the Markdown renderer, a browser, a JSON parser, the eye).
DISGUISES = {
    "markdown escapes": _each_punctuation(lambda c: "\\" + c),
    "decimal references": _each_punctuation(lambda c: f"&#{ord(c)};"),
    "hex references": _each_punctuation(lambda c: f"&#x{ord(c):x};"),
    "named references": _each_punctuation(lambda c: "&" + _NAMED[c] if c in _NAMED else c),
    "every character a reference": lambda text: "".join(f"&#{ord(c)};" for c in text),
    "json unicode escapes": _each_punctuation(lambda c: f"\\u{ord(c):04x}"),
    "soft hyphen": _spliced("\u00ad"),
    "right-to-left override": _spliced("\u202e"),
    "left-to-right mark": _spliced("\u200e"),
    "invisible separator": _spliced("\u2063"),
    "mongolian vowel separator": _spliced("\u180e"),
    "combining grapheme joiner": _spliced("\u034f"),
    "variation selector 16": _spliced("\ufe0f"),
    "variation selector 17": _spliced("\U000e0100"),
    "tag letter": _spliced("\U000e0041"),
    "soft hyphen as a reference": _spliced("&shy;"),
    "full-width": lambda text: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text),
    # Session 7: a space of category Zs other than " " inside a token (a reader deletes
    # it: nothing else is drawn there), a combining mark on a letter of a token, letters
    # of a word's first three replaced by their Cyrillic / Greek look-alikes, a blank or
    # "_" inside a secret word of a name.
    "no-break space": _spliced("\u00a0"),
    "narrow no-break space": _spliced("\u202f"),
    "thin space": _spliced("\u2009"),
    "ideographic space": _spliced("\u3000"),
    "every blank a no-break space": lambda text: text.replace(" ", "\u00a0"),
    "combining acute accent": _spliced("\u0301"),
    "combining dot below": _spliced("\u0323"),
    "an accent on every letter": lambda text: re.sub(r"[A-Za-z]", lambda m: m[0] + "\u0301", text),
    "cyrillic look-alikes": lambda text: _looks_alike(text, CYRILLIC),
    "greek look-alikes": lambda text: _looks_alike(text, GREEK),
    "a blank inside a secret word": lambda text: _SPLIT_WORDS.sub(r"\1 \2", text),
    "an underscore inside a secret word": lambda text: _SPLIT_WORDS.sub(r"\1_\2", text),
}
_INVISIBLE = "".join(chr(c) for c in (0xAD, 0x200E, 0x202E, 0x2063, 0x180E, 0x34F, 0xFE0F, 0xE0100, 0xE0041))
_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def _read(text: str) -> str:
    """What a reader makes of ``text``: references and escapes decoded, invisible
    characters, combining marks and spaces other than " " dropped, look-alikes read as
    the Latin letters they look like, NFKC (full-width letters as letters)."""
    text = html.unescape(_MARKDOWN_ESCAPE.sub(r"\1", _JSON_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text)))
    text = "".join(c for c in text if c not in _INVISIBLE and unicodedata.category(c) != "Mn"
                   and (c == " " or unicodedata.category(c) != "Zs"))
    return unicodedata.normalize("NFKC", text.translate(_LATIN_OF))


def _leaks(stored: str, fragments: list[str]) -> list[str]:
    views = (stored, _read(stored), _read(html.unescape(stored)))
    return [f for f in fragments if any(f in v for v in views)]


def _shown(stored: str) -> str:
    """The run page's HTML for ``stored`` (the real renderer and sanitiser)."""
    return str(render_markdown(stored))


def test_the_disguised_corpus_leaks_without_redaction():
    """The checks can fail: every disguised sample holds every fragment for a reader."""
    bare = secret_scan.Redactor(secret_scan._Pattern, rules=())
    for name, text, fragments in SECRETS:
        for disguise in DISGUISES.values():
            assert _leaks(bare.text(disguise(text)), fragments) == fragments, name


def test_no_disguised_corpus_shape_leaks():
    """Before the reference and character levels, on main at 0c0851f..f1bdebd: see the
    commit message for the counts per disguise; now none."""
    leaked = {kind: [name for name, text, fragments in SECRETS if _leaks(redact_text(disguise(text)), fragments)]
              for kind, disguise in DISGUISES.items()}
    assert leaked == {kind: [] for kind in DISGUISES}


@pytest.mark.parametrize("kind", DISGUISES)
def test_what_the_page_renders_from_a_stored_text_holds_nothing_to_redact(kind):
    """Property over the corpus x disguises: the renderer's output of the stored text,
    scanned again (with the decoded view), has nothing new to redact, and no fragment."""
    for name, text, fragments in SECRETS:
        stored = redact_text(DISGUISES[kind](text))
        shown = _shown(stored)
        assert redact_text(shown) == shown, (name, stored, shown)
        assert _leaks(shown, fragments) == [], (name, shown)


@pytest.mark.parametrize(("text", "expected"), [
    (f"md_emph: ghp\\_{GH_BODY}", f"md_emph: {R}"),
    (f"ent_named: ghp&lowbar;{GH_BODY}", f"ent_named: {R}"),
    (f"ent_hex: ghp&#x5f;{GH_BODY}", f"ent_hex: {R}"),
    (f"ent_dec: ghp&#95;{GH_BODY}", f"ent_dec: {R}"),
    (f"ghp&#X5F;{GH_BODY} and ghp&#0000095;{GH_BODY}", f"{R} and {R}"),
    (f"ghp&UnderBar;{GH_BODY}.", f"{R}."),
    (f"&#103;&#104;&#112;&#95;{GH_BODY}", R),                         # every character
    (f"ghp%26%2395%3B{GH_BODY}", R),                                  # a reference percent-encoded
    (f"ghp\\u005f{GH_BODY} ghp\\u005F{GH_BODY}", f"{R} {R}"),        # JSON escapes in text
    (f"ghp_{GH_BODY[:4]}&shy;{GH_BODY[4:]}", R),                      # an invisible reference
    (f"ghp_{GH_BODY[:4]}&#8203;{GH_BODY[4:]}!", f"{R}!"),
    ("password=hunt&#101;r2hunter2 next", f"password={R} next"),
    ("password\\=hunter2hunter2", f"password\\={R}"),
    (f"curl -H 'Authorization: Bearer&#32;{GH_BODY}'", f"curl -H 'Authorization: {R}'"),
])
def test_a_disguised_secret_becomes_redacted_and_its_label_stays(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("mark", [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u180e", "\u2061", "\u2062",
    "\u2063", "\u2064", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066",
    "\u2069", "\ufe00", "\ufe0f", "\U000e0001", "\U000e0041", "\U000e007f", "\U000e0100", "\U000e01ef",
    "\u180b", "\u3164", "\u115f",
])
@pytest.mark.parametrize("where", [2, 3, 10])  # in the prefix, before "_", in the body
def test_an_invisible_character_inside_a_token_hides_nothing(mark, where):
    text = f"see {GH[:where]}{mark}{GH[where:]} now"
    assert redact_text(text) == f"see {R} now"


def test_full_width_letters_are_read_as_letters():
    assert redact_text(f"tool_fullwidth_ｇｈｐ_{GH_BODY}") == f"tool_fullwidth_{R}"
    assert redact_text(f"ｇｈｐ＿{GH_BODY} ok") == f"{R} ok"
    assert redact_text("ｐａｓｓｗｏｒｄ＝ｈｕｎｔｅｒ２ｈｕｎｔｅｒ２") == f"ｐａｓｓｗｏｒｄ＝{R}"


@pytest.mark.parametrize("text", [
    "a\\*b and \\_not emphasis\\_ and \\# not a heading, C:\\\\Users\\\\me",
    "Tom &amp; Jerry: &lt;tag&gt; &quot;quoted&quot; &copy; 2026 &#169; &#xA9; &nbsp;x &ampfoo &#; &#x; &",
    "emoji ❤️ ☺️ 👍🏽 👨‍👩‍👧 🏳️‍🌈 ✈︎ 1️⃣ and a flag 🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "עברית \u200fשלום\u200f עולם, العربية \u200e123\u200e, \u202bembedded\u202c \u2067isolate\u2069",
    "中文：测试，全角（括号）和「引号」；日本語のテキスト。한국어 텍스트",
    "ｆｕｌｌ－ｗｉｄｔｈ ｐｒｏｓｅ １２３ and ﬁ ligatures, x² and ½",
    "soft\u00adhyphen\u00adated words and a word\u2060joiner",
    'json "\\u00e9t\\u00e9" and "\\ud83d\\ude00" and "\\u0000" and \\u12',
    "\\\\\\\\ and \\& and \\\\_ and &amp;#95;",
    *ORDINARY,
    *(html.escape(t) for t in ORDINARY),
])
def test_ordinary_text_with_escapes_entities_marks_and_cjk_is_unchanged(text):
    assert redact_text(text) == text


def test_redaction_of_disguised_text_is_idempotent():
    for _, text, _ in SECRETS:
        for disguise in DISGUISES.values():
            once = redact_text(disguise(text))
            assert redact_text(once) == once


def test_a_document_reads_each_disguised_text_as_it_would_alone():
    texts = [f"ghp&#95;{GH_BODY}", "a\\*b", f"ghp\u00ad_{GH_BODY}", "&amp;", f"ｇｈｐ_{GH_BODY}", "plain"]
    assert secret_scan._redactor.many(texts) == [redact_text(t) for t in texts] == [R, "a\\*b", R, "&amp;", R, "plain"]


def test_the_invisible_characters_are_the_browsers_blank_ones():
    """Category Cf by ``unicodedata``, plus the default-ignorable characters of other
    categories (named here so a wrong code point in the hand list fails)."""
    names = {unicodedata.name(chr(c)) for c in encoded_text._INVISIBLE_OTHER}
    assert names == {"COMBINING GRAPHEME JOINER", "HANGUL CHOSEONG FILLER", "HANGUL JUNGSEONG FILLER",
                     "KHMER VOWEL INHERENT AQ", "KHMER VOWEL INHERENT AA", "HANGUL FILLER",
                     "HALFWIDTH HANGUL FILLER", "MONGOLIAN FREE VARIATION SELECTOR ONE",
                     "MONGOLIAN FREE VARIATION SELECTOR TWO", "MONGOLIAN FREE VARIATION SELECTOR THREE",
                     "MONGOLIAN FREE VARIATION SELECTOR FOUR"}
    table = encoded_text.character_table()
    assert all(table[c] is None for c in (0xAD, 0x200E, 0x202E, 0x2064, 0x180E, 0xFE0F, 0xE0041, 0xE01EF))
    assert table[ord("ｇ")] == "g" and table[0xFF3F] == "_" and ord("g") not in table
    assert ord("中") not in table and table[0x0301] is None  # CJK stays; combining marks go (session 7)


# --------------------------------------------------------------------------- base64url

def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _readable_base64url(stored: str) -> str:
    """What is stored, with every base64 or base64url run in it decoded beside it."""
    decoded = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}={0,2}", stored):
        run = run.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            decoded.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode("utf-8", "replace"))
        except ValueError:
            pass
    return "\n".join([stored, *decoded])


def test_the_base64url_corpus_leaks_without_redaction_and_holds_url_letters():
    bare = secret_scan.Redactor(secret_scan._Pattern, rules=())
    for name, text, fragments in SECRETS:
        readable = _readable_base64url(bare.text(f"blob {_b64url(text)} end"))
        assert [f for f in fragments if f in readable] == fragments, name
    assert sum(1 for _, text, _ in SECRETS if {"-", "_"} & set(_b64url(text))) == 7  # session 16: "password holding < >" adds one


def test_no_base64url_corpus_shape_leaks():
    """Base64url without padding (a "-" or "_" where standard base64 has "+" or "/"):
    before, the standard-alphabet runs stopped at "-" / "_" and their pieces decoded to
    nothing or to half a secret (1 of the 146 shapes leaked on main at d9be4d1: the STS
    XML secret key; "password=hunter2?>hunter2" left "-aHVudGVyMi..." = "hunter2"
    readable); now none."""
    leaked = [name for name, text, fragments in SECRETS
              if [f for f in fragments if f in _readable_base64url(redact_text(f"blob {_b64url(text)} end"))]]
    assert leaked == sorted(NOT_ASCII_IN_BASE64)  # a known gap: base64 of non-ASCII text


@pytest.mark.parametrize(("text", "expected"), [
    # The walk-through's payloads: unpadded base64 of the token, base64 of a line holding it.
    ("Z2hwX0ExYjJDM2Q0RTVmNkc3aDhJOWowSzFsMk0zbjRPNXA2UTdyOA", R),
    (f"x {base64.b64encode(f'token: {GH}'.encode()).decode()} y", f"x {R} y"),
    (f"x {_b64url('password=hunter2?>hunter2 and more text here')} y", f"x {R} y"),
    (f"x {_b64url('a?>' + GH)} y", f"x {R} y"),
    ("my_long_identifier_name_here and some-kebab-case-words-here-too", None),
    (f"x {_b64url('just a note about the weather, nothing secret???>>>')} y", None),
])
def test_base64url_of_a_secret_is_redacted_and_ordinary_words_stay(text, expected):
    assert redact_text(text) == (text if expected is None else expected)


def test_lower_case_aws_key_ids_are_no_key_ids():
    """AWS access key ids are upper-case letters and digits only (AKIA + 16); a lower-case
    ``akia...`` is no key id AWS issues, so it is left as it is (only a secret-named
    assignment would redact it)."""
    assert redact_text("akiaiosfodnn7example") == "akiaiosfodnn7example"
    assert redact_text("AKIAIOSFODNN7EXAMPL3") == R


# --------------------------------------------------------------------------- session 8

@pytest.mark.parametrize(("text", "expected"), [
    # A dash where GitHub writes "_": a reader still sees the token.
    (f"see ghp-{GH_BODY} now", f"see {R} now"),
    (f"gho-{GH_BODY}, ghs-{GH_BODY}", f"{R}, {R}"),
    # Latin small letter script g (U+0261), which Unicode's confusables give as "g".
    (f"see \u0261hp_{GH_BODY} now", f"see {R} now"),
    (f"\u0261hp-{GH_BODY}", R),
])
def test_a_dash_for_the_underscore_and_a_script_g_hide_nothing(text, expected):
    assert redact_text(text) == expected


def _hex(text: str) -> str:
    return text.encode().hex()


@pytest.mark.parametrize(("text", "expected"), [
    (f"x {_hex(GH)} y", f"x {R} y"),
    (f"x {_hex(GH).upper()} y", f"x {R} y"),
    (f"x 0x{_hex(GH)} y", f"x {R} y"),
    (f"blob={_hex('export DB_PASSWORD=hunter2hunter2')}", f"blob={R}"),
    (f"x {_hex('token: ' + GH)}.", f"x {R}."),
    (f'{{"data": "{_hex("Authorization: Bearer " + GH_BODY)}"}}', f'{{"data": "{R}"}}'),
    # Hex of base64 of the token.
    (f"x {_hex(base64.b64encode(GH.encode()).decode())} y", f"x {R} y"),
])
def test_hex_of_a_secret_is_redacted(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    # Digests, ids and hex of ordinary text stay: a digest decodes to binary, not to text.
    "sha256 " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 5d41402abc4b2a76b9719d911017c592 and git 3f786850e387550fdab836ed7e6dc881de23001b",
    "commit b97ea6c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7 uuid 123e4567-e89b-12d3-a456-426614174000",
    f"hex of a note: {_hex('just a note about the weather today, nothing else')}",
    "a long number 2026120217000012345678901234567890123456789 and 0x" + "ff" * 40,
    "mac 00:1b:44:11:3a:b7 and ipv6 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
    "sha512 " + "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
])
def test_hashes_uuids_and_hex_of_ordinary_text_stay(text):
    assert redact_text(text) == text


def test_the_script_g_is_read_as_g_and_prose_with_it_stays():
    assert encoded_text.character_table()[0x0261] == "g"
    phonetic = "IPA: /\u0261\u028ad/ good, /\u0261\u025b\u0251/ and \u0261ood \u0261rief"
    assert redact_text(phonetic) == phonetic
