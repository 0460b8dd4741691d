"""Secret redaction of every text a run carries, in linear time (SPEC 4).

What: provider API keys, cloud access keys and secret keys and session tokens, bearer /
basic / digest ``Authorization`` headers (``Bearer TOKEN`` also without the header name:
``_bearer``), cookies and session ids in header text, JWTs,
PEM and PuTTY private keys (also base64-encoded, as in a Kubernetes secret), passwords
in URLs (also with ``@ / #`` inside), ``NAME=value`` / ``name: value`` / ``"name":
"value"`` / ``<Name>value</Name>`` assignments whose name ends in PASSWORD, SECRET,
TOKEN, KEY, PWD, PASS, CREDENTIALS (any casing: ``DB_PASSWORD``, ``dbPassword``,
``sessionToken``; ``token: Bearer V`` hides V, the scheme stays; an unquoted value goes
on through ``& ; , ' < >`` unless the next field starts there, ``_UNQUOTED_VALUE``) or in a Chinese one
(``密码=V``, ``访问令牌：V``, "the password is V": ``密码是V`` / ``密码为V``: ``_CJK_SECRET_WORDS``;
after "is" a name of algorithms, ``AES-256``, is none: ``_algorithm_name``),
an AWS secret access key beside its key id (``AKIA... V``, within ``AWS_NEAR`` bytes:
``Redactor._aws_pairs``; a bare 40-character run alone stays: a git hash is one), what
``aws configure`` echoes after its key prompts (``AWS Secret Access Key [None]: V``),
command-line credentials (``curl -u user:pw``, ``mysql -pPW``, ``redis-cli -a 'PW'``
(also with the quote left open: ``-a 'PW``),
``--password pw``, ``sqlcmd -P pw``, ``mongosh -p pw``, also right after the command's
name: ``_spaced_password``; redis ``AUTH [user] pw`` on a ``redis-cli`` line or after its
``host:port>`` prompt; ``htpasswd -b [file] user pw``: ``_htpasswd``), a secret name, blanks and a password-looking value (``aws configure
set aws_secret_access_key V``, ``token V``: 8+ characters with a letter and a digit, so
"token bucket" stays; after a password's name also a well-known password that is no
English word: ``password letmein``, ``the password is changeme``), a password's own name
(password, passwd, passphrase, pwd, pw), "is" / "was" or a blank, and a value shaped like
a password (``the password is hunter2``, ``passwd hunter2``: 6+ characters with a letter
and a digit or a symbol, or 6+ digits; "the password is wrong / reset / required" stays:
``_password_shaped``), ``pw: V`` read as ``pwd: V``, and ``user:password@host`` without a scheme (same value rule;
``mailto:`` and ``image:tag@sha256`` stay) — also when glued to the text before them (after a letter, a digit,
``_``, a JSON-escaped ``\\n`` or a percent-encoded ``%3D``). Each becomes ``[redacted]``;
a label in front of a secret (``password=``, ``Authorization: Bearer``) stays readable, and
so do a full stop or a closing bracket that ends a bare value (``(mysql -pPW)``,
``（密码是V）``: ``_value_end``). Values that hold no secret stay: booleans (yes / no too:
"using password: YES"), null, ``n/a``, a variable reference (``_keep_value``).

How, and why it is linear: the rules are regular expressions in RE2 syntax (no
look-around, no back-reference) run by an engine that guarantees time linear in the
input — RE2, injected by ``services.secret_scan`` because this module imports only the
standard library. Each rule is one pass over the text; a match is handled by a small
function that looks only at the match (a name's last word, a base64 header), so the
whole costs O(rules x length). Decisions a regular expression cannot take without
look-around (``monkey=`` is not a key, ``public_key`` is not a secret, ``PWD=/home``
is a directory, ``pwd: hunter2`` a password but ``pwd: command not found`` a message) are
taken there instead.

Encoded and disguised secrets: a text holding a percent escape (``ghp%5F...``,
``Authorization%3A%20Bearer%20...``, also encoded twice: ``%253D``), an HTML character
reference or a Markdown / JSON escape (``ghp&#95;...``, ``ghp\\_...``, ``ghp\\u005f...``:
the run page's Markdown renderer decodes the first two), an invisible character inside a
token (category Cf such as U+200B or the soft hyphen, variation selectors ...) or
full-width letters (NFKC) is also scanned as ``encoded_text.view`` decodes it (in a text holding a ``%``, ``+`` is a space, as form
encoding writes it; elsewhere it stays a ``+``: see that module). What the rules find
there is mapped back to the bytes it came from, and those are redacted in the text as
stored, so the secret survives in neither form; both scans read the text as it came.
Decoding and mapping back are linear (C-speed chunks, a walk of at most one chunk per
secret found; past ``ENCODED_LIMIT`` such secrets the rest of the text is replaced).

Many texts, one pass: ``Redactor.many`` joins the texts of a document with NUL (which no
rule matches and which ingested text never holds, SPEC 10) and runs each rule once over
the join, so a document of a million short strings costs one pass, not a million. The
texts holding a ``%`` are joined apart from the others (``+`` reads differently in them).

Structured values: in JSON, a value stored under a secret-named key (``password``,
``api_key``, ``sessionToken``, ``credentials``, ``Authorization`` ...) is replaced whole,
strings, numbers and containers alike (booleans and null stay: they hold no secret); so
is the value of an entry whose name field names a secret (``{"name": "DB_PASSWORD",
"value": ...}`` in a Kubernetes or ECS env list, ``_PAIRS``), also as text or YAML.

Keys: a call id, a tool name, a message / step / citation id or a JSON object key is
the key of something. Redacted like any text, two different ids could come out equal
(``call_[redacted]``) and one call would overwrite the other. So a key that redaction
changed gets ``~`` and a 16-hex digest of the original appended: the same id always maps
to the same key (replays stay idempotent), two different ids to two different keys. The
digest is a keyed BLAKE2b (the key comes from the app's secret), so the stored digest
cannot be used to confirm a guessed secret offline.

Bounded texts (a step's name and status, an outcome label) are redacted, then cut to
their schema's limit: ``[redacted]`` is longer than a short secret it replaces.

Summaries: redact first, then serialise and cut (``cut``): redacting after the cut
would let a secret that straddles the cut slip through half-visible. The cut keeps the
original length so pages can say "cut at 2,000 of 5,731 characters".
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from string import hexdigits
from typing import Any, Protocol

from . import base64_text, encoded_text, hex_text

REDACTED = "[redacted]"
SUMMARY_LIMIT = 2000  # characters (SPEC 4)
KEY_DIGEST_HEX = 16  # hex characters of the digest appended to a redacted key

_R = REDACTED.encode()
_SEP = "\x00"  # joins the texts of one document; no rule matches it (see ``many``)


Spans = Sequence[tuple[int, int]]
"""The spans of one match: group 0 (the whole match) first, then each group in order;
``(-1, -1)`` for a group that took no part."""


class Compiled(Protocol):
    """A compiled pattern (leftmost-first semantics, as Perl / Python / RE2)."""

    def search(self, text: bytes, pos: int) -> Spans | None:
        """The spans of the leftmost match in ``text`` starting at or after ``pos``."""
        ...


Compile = Callable[[bytes], Compiled]
"""The engine: pattern (RE2 syntax, bytes) -> compiled pattern. Searching must take
time linear in the text searched (RE2 guarantees it; Python's ``re`` does not)."""


# --------------------------------------------------------------------------- names

# A name ending in one of these (after dropping ``_ - .`` and casing) names a secret.
_SECRET_WORDS = (
    "password", "passwd", "passphrase", "secret", "token", "credentials", "credential",
    "apikey", "accesskey", "secretkey", "privatekey", "accountkey", "masterkey",
    "authorization", "cookie", "sessionid", "sessid", "amzsignature", "googsignature",
)
# Short words name a secret only as a word of their own: the whole name, or after
# ``_ - . :`` or a lower-case letter / digit (camelCase). ``monkey`` and ``bypass`` do not.
_SHORT_SECRET_WORDS = ("key", "pwd", "pw", "pass", "auth", "sig")
# Names that end like a secret but name something public (compared without ``_ - .``).
_PUBLIC_NAMES = (
    "publickey", "primarykey", "foreignkey", "sortkey", "partitionkey", "hashkey",
    "rangekey", "cachekey", "idempotencykey", "nexttoken", "pagetoken", "continuationtoken",
    "paginationtoken",
)
_WORD_BREAKS = "_-.: "
# Chinese names of a secret (the seeds are Chinese): password (简 / 繁), secret key (and
# its common misspelling 秘钥), private key, password (口令), token. A name ending in one
# names a secret (数据库密码, 访问令牌); 令牌桶 (token bucket), 密码提示 (hint) do not.
_CJK_SECRET_WORDS = ("密码", "密碼", "密钥", "密鑰", "秘钥", "秘鑰", "私钥", "私鑰", "口令", "令牌")
# "is" after one of them (简 / 繁): 密码是V, 密码为V, 密碼為V ("the password is V").
_CJK_IS = "(?:是|为|為)"


def _squash(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "").replace(" ", "")


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when ``name`` (a JSON key, an env variable, a header, a CLI flag) names a
    secret (SPEC 4): it ends in one of ``_SECRET_WORDS`` (``DB_PASSWORD``, ``dbPassword``,
    ``refresh_token``, ``X-Api-Key``) or in one of ``_CJK_SECRET_WORDS`` (``数据库密码``), or is / ends with one of ``_SHORT_SECRET_WORDS`` as a
    word of its own (``pwd``, ``db_pass``, ``apiKey``, ``sig``), and is not one of
    ``_PUBLIC_NAMES`` (``public_key``, ``next_token``)."""
    bare = name.strip().lstrip("-").strip("\"'")
    squashed = _squash(bare)
    if not squashed or squashed.endswith(_PUBLIC_NAMES):
        return False
    if squashed.endswith(_SECRET_WORDS) or squashed.endswith(_CJK_SECRET_WORDS):
        return True
    lowered = bare.lower()
    for word in _SHORT_SECRET_WORDS:
        if not lowered.endswith(word):
            continue
        at = len(bare) - len(word)
        if at == 0:
            return True
        before, first = bare[at - 1], bare[at]
        if before in _WORD_BREAKS or (first.isupper() and (before.islower() or before.isdigit())):
            return True
    return False


# --------------------------------------------------------------------------- rules

# An AWS access key id: its secret access key beside it is a secret too (``_aws_pairs``).
AWS_KEY_ID = r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"
# A run of base64 of 40 characters or more; one of exactly 40 may be the secret access key.
AWS_SECRET_RUN = r"[A-Za-z0-9+/]{40,}"
AWS_NEAR = 256  # bytes between a key id and its secret access key, either way (at most)

# The app's own ingest tokens (``services.admin.tokens`` issues them): the prefix and
# ``secrets.token_urlsafe(INGEST_TOKEN_BYTES)``, 43 characters of URL-safe base64. Found in
# any text like a provider's key, and so refused as a run id (``secret_scan.refuse_secret_id``).
INGEST_TOKEN_PREFIX = "rvw_"
INGEST_TOKEN_BYTES = 32
INGEST_TOKEN = INGEST_TOKEN_PREFIX + r"[A-Za-z0-9_-]{43}"

# Secrets recognised by their own shape: the whole match is replaced. Each entry is one
# provider / format; none starts with \b, so a key glued to the text before it is found.
# No class may match NUL (the separator of ``many``).
SPAN_PATTERNS: tuple[tuple[str, str], ...] = (
    ("pem private key",
     (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
      r"(?:[^\x00]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[^\x00]*)")),
    ("putty private key",
     r"PuTTY-User-Key-File-[0-9]+:(?:[^\x00]*?Private-MAC: *[0-9A-Fa-f]+|[^\x00]*)"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]+)?"),
    ("openai / anthropic prefixed key",
     r"sk-(?:proj|svcacct|admin|None|or-v1|ant-(?:api|admin|sid)[0-9]{2})-[A-Za-z0-9_-]{20,}"),
    ("openai legacy key", r"sk-[A-Za-z0-9]{32,}"),
    ("aws access key id", AWS_KEY_ID),
    ("tencent secret id", r"AKID[A-Za-z0-9]{13,}"),
    ("github token", r"gh[pousr][_-][A-Za-z0-9]{36,}"),  # "-": a reader still sees the token
    ("github fine-grained token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab token",
     r"(?:glpat|gldt|glft|glsoat|glrt|glrtr|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{20,}"),
    ("gitlab runner registration token", r"GR1348941[A-Za-z0-9_-]{20,}"),
    ("slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack app token", r"xapp-[0-9]-[A-Za-z0-9-]{10,}"),
    ("slack webhook", r"hooks\.slack\.com(?:/|%2[Ff])services(?:/|%2[Ff])[A-Za-z0-9_/%]{8,}"),
    ("google api key", r"AIza[0-9A-Za-z_-]{35}"),
    ("google oauth access token", r"ya29\.[0-9A-Za-z_-]{20,}"),
    ("google oauth client secret", r"GOCSPX-[0-9A-Za-z_-]{20,}"),
    ("stripe secret / restricted key", r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("stripe webhook secret", r"whsec_[0-9A-Za-z+/=]{24,}"),
    ("sendgrid key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("hugging face token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm token", r"npm_[A-Za-z0-9]{36,}"),
    ("pypi token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("digitalocean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("shopify token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ("twilio api key", r"SK[0-9a-f]{32}"),
    ("mailchimp key", r"[0-9a-f]{32}-us[0-9]{1,2}"),
    ("telegram bot token", r"[0-9]{8,10}:[0-9A-Za-z_-]{35}"),
    ("discord bot token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}"),
    ("square secret", r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,}"),
    ("artifactory token", r"AKCp[A-Za-z0-9]{60,}"),
    ("softlayer api key", r"api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/[a-z0-9]{64}"),
    ("databricks token", r"dapi[0-9a-f]{32}"),
    ("vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
    ("postman key", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    ("atlassian token", r"ATATT3[A-Za-z0-9_=-]{20,}"),
    ("grafana service account token", r"glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}"),
    ("groq key", r"gsk_[A-Za-z0-9]{48,}"),
    ("replicate token", r"r8_[A-Za-z0-9]{37}"),
    ("xai key", r"xai-[A-Za-z0-9]{60,}"),
    ("perplexity key", r"pplx-[A-Za-z0-9]{40,}"),
    ("linear key", r"lin_api_[A-Za-z0-9]{40}"),
    ("age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("sentry token", r"sntrys_[A-Za-z0-9+/=_-]{40,}"),
    ("doppler token", r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{40,}"),
    ("figma token", r"figd_[A-Za-z0-9_-]{40,}"),
    ("reviewapp ingest token", INGEST_TOKEN),
)

# Kept whole by the span pass (group 1 of its regex): a data URI, or a run of base64
# with a ``+`` or ``/`` and 255 more characters after it (image data). Base64 of binary
# data holds every 4-letter prefix somewhere (``AIza`` + 35 letters turns up in about one
# megabyte in fifty), and neither is a secret's shape. A run of letters and digits alone
# is not kept: a key glued to a long word must still be found.
#
# The run starts where a run of base64 starts (the start of the text, or after a character
# that is no base64): a run that could start anywhere (``[A-Za-z0-9]*`` alone) kept every
# search inside a long run of letters reading to the run's end to rule it out, so a run
# of glued key ids (``AKIA...AKIA...``, 20,000 of them) cost a read of the rest of the run
# per id: quadratic (0.4 s for 100 KB, 6 s for 400 KB). The character before it is part
# of the match, which is kept as it is (a group, not ``(?:``: tests split the rule there).
_KEEP_PATTERN = (r"data:[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/=]+"
                 r"|(^|[^A-Za-z0-9+/])[A-Za-z0-9]*[+/][A-Za-z0-9+/]{255,}={0,2}")

# Printable characters of an unquoted value: up to whitespace, a quote, a backslash (a
# JSON escape such as \n follows), a separator of lists and queries, or a closing bracket.
_VALUE = r"[^\s\"'\\,;&<>\]}\x00]"
# The unquoted value of a secret-named assignment (``_assignment``) goes on through one of
# ``& ; , ' < >`` unless what follows marks the value's end (``Tr0ub4dor&3``, ``abc;def123``,
# ``ab,cd1234``, ``pass'word1``, ``ab<cd>123`` are one value each):
#   ``;`` / ``&``  end it before a name and ``=`` (``;Database=y``, ``&user=x``; and before
#                  capitalised words and ``=`` after ``;``: ``;User Id=sa``, ``_more_name``);
#   ``,``          ends it before a blank, the end of the text, or a name and ``=`` / ``:``;
#   ``'`` / ``>``  end it only at its end (a quote around the whole assignment closes there);
#   ``<``          ends it before ``/`` (a closing tag: ``<td>password: abc</td>``).
# A name is ``[A-Za-z_][A-Za-z0-9_.-]*``. A chunk after ``; & ,`` that starts like a name
# but ends before another character (``;Database``) is read by the pattern and cut off by
# ``_assignment``, which then tells the loop to go on from the cut (``Redactor._bytes``),
# so ``;token=V`` after it is still found; only that one chunk is read twice (linear).
_VALUE_NOT_NAME = r"[^\s\"'\\,;&<>\]}\x00A-Za-z_]"
_NAME_CHARS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"


def _chunk(stops: str) -> str:
    # After a separator: a value part that is not a name followed by one of ``stops``.
    other = r"[^\s\"'\\,;&<>\]}\x00A-Za-z0-9_.-" + stops + "]"
    return (r"(?:" + _VALUE_NOT_NAME + _VALUE + r"*|[A-Za-z_][A-Za-z0-9_.-]*" + other + _VALUE
            + r"*|[A-Za-z_][A-Za-z0-9_.-]*)")


_UNQUOTED_VALUE = (_VALUE + r"+(?:[;&]" + _chunk("=") + r"|," + _chunk("=:") + r"|['>]" + _VALUE
                   + r"+|<[^\s\"'\\,;&<>\]}\x00/]" + _VALUE + r"*)*")
# A name ending in a secret-ish word; ``is_secret_name`` decides. "pass word" / "pass_phrase":
# a blank or one of ``_ . -`` may split the compound ``pass`` words (``{"pass word": V}``,
# ``DB_PASS_WORD=V``); not the others: "session id", "api key" read as prose (a name
# ending in the short word ``key`` is found as it is, and ``_assignment`` decides).
_NAME = (r"[A-Za-z0-9_.-]*(?i:pass[ _.-]?word|passwd|pass[ _.-]?phrase|pwd?|pass|secret|token|key|"
         r"credentials?|auth|cookie|sig|signature|sessionid|sessid)")


def _group(m: Spans, text: bytes, g: int) -> bytes:
    s, e = m[g]
    return text[s:e] if s >= 0 else b""


def _replace_group(m: Spans, text: bytes, g: int) -> bytes | None:
    """The match with group ``g`` replaced by ``[redacted]`` (the label around it stays);
    ``None`` (keep) when the group already starts with ``[redacted]`` (an earlier rule
    took the secret; ``]`` ends an unquoted value, so the group may hold ``[redacted``)."""
    start, end = m[0]
    s, e = m[g]
    if text.startswith(_R, s):
        return None
    return text[start:s] + _R + text[e:end]


def _replace_span(m: Spans, text: bytes, s: int, e: int) -> bytes | None:
    """``_replace_group`` for the value ``text[s:e]`` inside the match (``_value_end``)."""
    start, end = m[0]
    if text.startswith(_R, s):
        return None
    return text[start:s] + _R + text[e:end]


# A full stop or a comma, ASCII or Chinese, that ends a sentence after a bare value.
_SENTENCE_ENDS = (b".", b",", "。".encode(), "，".encode())


def _value_end(text: bytes, s: int, e: int) -> int:
    """The end of the bare value ``text[s:e]`` without the full stops and commas (``. ,``
    and ``。 ，``) it ends in right before whitespace, the end of the text (or a NUL of
    ``many``) or a closing bracket it leaves out: they end the sentence (``密码是hunter2.
    AWS``), as after ``Bearer TOKEN`` (``_bearer``); one inside the value (``s3.cr``) or
    before other text is its own. Closing brackets (``) ] ）``) it ends in are left out
    too, wherever they stand, when the value holds no opening one (``( [ （``): they close
    the text around it (``(mysql -pS3cret!)``, ``（密码是AB12CD）``); a value that opens
    one keeps them (``-pab(c)``). ``e`` when the value is nothing else. Linear in the
    value (a C-speed search for an opening bracket); only the last ``_SENTENCE_LOOK``
    bytes are stripped (a longer run of them is left in the value, redacted with it)."""
    after = text[e:e + 1]
    ends = after in (b"", b"\x00") or after.isspace()
    low = max(s, e - _SENTENCE_LOOK)
    cut = e
    opens = None  # the value holds an opening bracket (looked for once, at the first closer)
    while cut > low:
        if ends and text.endswith(_SENTENCE_ENDS, low, cut):
            cut -= 1 if text[cut - 1] < 0x80 else 3
        elif text.endswith(_CLOSERS, low, cut):
            if opens is None:
                opens = any(text.find(o, s, e) >= 0 for o in _OPENERS)
            if opens:
                break
            cut -= 1 if text[cut - 1] < 0x80 else 3
            ends = True  # a full stop before the bracket ends the sentence inside it
        else:
            break
    return cut if cut > s else e


_SENTENCE_LOOK = 12  # "..." and a few more
_OPENERS = (b"(", b"[", "（".encode())
_CLOSERS = (b")", b"]", "）".encode())


def _keep_value(value: bytes) -> bool:
    # Nothing to hide: empty, already redacted, a boolean / null (yes / no too: YAML 1.1's
    # booleans, MySQL's "(using password: YES)"), "n/a", or a variable reference.
    if not value or value.startswith(_R):
        return True
    lowered = value.lower()
    if lowered in (b"true", b"false", b"yes", b"no", b"null", b"none", b"nil", b"undefined", b"n/a"):
        return True
    return value.startswith(b"$") and value.lstrip(b"${").rstrip(b"}").replace(b"_", b"").isalnum()


def _name_of(m: Spans, text: bytes, g: int) -> str:
    """The name in group ``g`` without what was glued in front of it: the letter of a
    JSON escape (``\\nDB_PASSWORD``) or the two hex digits of a percent escape (``%3Fkey``)."""
    s, e = m[g]
    name = text[s:e].decode("ascii", "replace")
    before = text[s - 1] if s > 0 else 0
    if before == 0x5C and name[:1] in ("n", "r", "t"):  # backslash
        return name[1:]
    if before == 0x25 and all(c in hexdigits for c in name[:2]):  # % and two hex digits
        return name[2:]
    return name


# How an assignment's name decides (``_name_kind``).
_NOT_SECRET, _SECRET, _SHORT, _WORKDIR, _SIGNATURE = range(5)


@lru_cache(maxsize=4096)  # names repeat: one text holds the same few names many times
def _name_kind(name: str) -> int:
    squashed = _squash(name.lstrip("-"))
    if squashed == "signature":
        return _SIGNATURE
    if not is_secret_name(name):
        return _NOT_SECRET
    if squashed in ("pwd", "pw"):
        return _WORKDIR  # "pw" reads as "pwd" does (``pw: hunter2``; ``pw: n/a`` stays)
    if squashed in _SHORT_SECRET_WORDS:
        return _SHORT
    return _SECRET


def _assignment(m: Spans, text: bytes) -> bytes | tuple[bytes, int] | None:
    # An unquoted value (group 8, the last of the pattern) may end before the match does
    # (``_unquoted_end``): then the replacement covers the text up to there, and the loop
    # goes on from there (``Redactor._bytes``).
    end = m[0][1]
    stop = _unquoted_end(text, *m[8]) if m[8][0] >= 0 else end
    new = _assigned_value(m, text, stop)
    if stop == end:
        return new
    start = m[0][0]
    return (text[start:stop] if new is None else new[:len(new) - (end - stop)]), stop


def _unquoted_end(text: bytes, s: int, e: int) -> int:
    """Where the unquoted value ``text[s:e]`` (``_UNQUOTED_VALUE``) ends: ``e``, or the
    last ``; & ,`` in it when the part after that is a name the next field's ``=`` (``:``
    after ``,``) follows, or capitalised words and ``=`` after ``;`` (``;User Id=sa``);
    before ``&amp;`` too when that ``;`` closes one (``&amp;user=x``)."""
    p = max(text.rfind(b";", s, e), text.rfind(b"&", s, e), text.rfind(b",", s, e))
    if p < 0:
        return e
    chunk, sep, after = text[p + 1:e], text[p:p + 1], text[e:e + 1]
    if not (chunk[:1].isalpha() or chunk[:1] == b"_") or chunk.translate(None, _NAME_CHARS):
        return e
    if after == b"=" or (sep == b"," and after == b":") or (sep == b";" and _more_name(text[e:e + 64])):
        return p - 4 if sep == b";" and text.endswith(b"&amp", s, p) and p - 4 > s else p
    return e


def _more_name(after: bytes) -> bool:
    """``after`` (a bounded look) is capitalised words, each after one blank, then ``=``:
    the rest of a connection string's name (`` Id=sa``, `` Security Info=False``)."""
    head, eq, _ = after.partition(b"=")
    words = head.split(b" ")
    return bool(eq) and len(words) > 1 and words[0] == b"" and all(
        w[:1].isupper() and w.isascii() and not w.translate(None, _NAME_CHARS) for w in words[1:])


def _assigned_value(m: Spans, text: bytes, stop: int) -> bytes | None:
    # Groups: 1 name, 2 separator; value in one of 3 (double quotes), 4 (single quotes),
    # 5 (escaped double quotes), 6 (unterminated double quote), 7 (unquoted, after the
    # scheme ``Bearer`` and blanks: ``token: Bearer V``), 8 (unquoted).
    name = _name_of(m, text, 1)
    kind = _name_kind(name)
    if kind == _NOT_SECRET:
        return None
    g = 8 if m[8][0] >= 0 else next(g for g in (3, 4, 5, 6, 7) if m[g][0] >= 0)
    vs, ve = m[g][0], stop if g == 8 else m[g][1]
    if g >= 7:
        ve = _value_end(text, vs, ve)
    if _keep_value(text[vs:ve]):
        return None
    # After a secret name, the scheme says a credential follows, whatever its shape (a
    # short word included: ``auth: Bearer abc``); the scheme stays readable as a label.
    if kind != _SECRET and g != 7:
        start = m[0][0]
        before = text[start - 1:start]
        if kind == _SIGNATURE:
            # A function's signature; ``?Signature=`` / ``&Signature=`` is a signed URL's.
            if before not in (b"?", b"&"):
                return None
        else:
            # A bare short word before a colon is prose or a table more often than a
            # secret ("PASS: 12", "Key: Value"); with "=" or as a quoted key it is one,
            # and so is a well-known password after ``pass:`` / ``pwd:`` ("pass: letmein").
            ss, se = m[2]
            value = text[vs:ve]
            if b"=" not in text[ss:se] and b"%3" not in text[ss:se] and before not in (b'"', b"'") \
                    and not _looks_like_password(value) \
                    and (kind != _WORKDIR or _pwd_message(value, text[ve:ve + 64])) \
                    and not (value.lower() in KNOWN_PASSWORDS and _squash(name) in ("pass", "pwd")):
                return None
            if kind == _WORKDIR and _workdir(value):
                return None  # the shell's working directory, not a password
    return _replace_span(m, text, vs, ve)


_ENCODED_PATH = (b"%2F", b"%2f", b"%7E", b"%7e")  # a percent-encoded "/" or "~"


def _workdir(value: bytes) -> bool:
    """A directory, as ``pwd`` prints one: ``/home``, ``~/src``, ``./build``, ``%2Fhome``,
    ``C:/Users`` (``C:\\Users`` reads as ``C:``: a backslash ends a value)."""
    return (value[:1] in (b"/", b"~") or value[:2] == b"./" or value[:3] in (b"../", *_ENCODED_PATH)
            or (value[:1].isalpha() and value[1:2] == b":" and value[2:3] in (b"", b"/")))


def _pwd_message(value: bytes, after: bytes) -> bool:
    """After ``pwd:``, the first word of the command's own messages ("pwd: command not
    found", "pwd: usage: ...", "pwd: write error: ...", "pwd: -x: invalid option"), not a
    value: an option, or letters only and then a colon or, after blanks, more words on
    the line (``after``: the bytes after the value, a bounded look). A value with a digit
    or a symbol (``hunter2``), or a word alone on its line (``pwd: letmein``) is one."""
    if value[:1] == b"-":
        return True
    if not value.rstrip(b":").isalpha():
        return False
    if value.endswith(b":"):
        return True
    rest = after.lstrip(b" \t")
    return len(rest) < len(after) and rest[:1] not in (b"", b"\r", b"\n", b"\\", b"\x00")


# Passwords made of letters only that lists of leaked passwords start with: taken for a
# password where a word is otherwise read as a name or a message (after ``pass:`` /
# ``pwd:``, after ``mysql -p`` and a blank). "admin", "root", "test" are left out: they
# name users and databases as often.
KNOWN_PASSWORDS = frozenset((
    b"password", b"passwd", b"letmein", b"changeme", b"qwerty", b"iloveyou", b"welcome",
    b"secret", b"toor", b"opensesame", b"trustno", b"sunshine", b"princess", b"dragon",
))


# Those that are no English word: after a password's name and a blank alone ("password
# letmein", ``_known_password``) a word of prose is as likely ("password reset"), and
# "password welcome email", "password secret in vault" are prose.
_UNWORDED_PASSWORDS = tuple(sorted(p.decode() for p in KNOWN_PASSWORDS - {
    b"password", b"passwd", b"secret", b"welcome", b"sunshine", b"princess", b"dragon"}))


def _looks_like_password(value: bytes) -> bool:
    """At least 8 characters with a letter and a digit, not a path: what a password or a
    key looks like and a word of prose ("bucket", "/home/user", "12 tests") does not."""
    return (len(value) >= 8 and value[:1] not in (b"/", b"~")
            and any(c in _DIGITS for c in value) and any(c in _LETTERS for c in value))


_DIGITS = frozenset(b"0123456789")
_LETTER_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTERS = frozenset(_LETTER_BYTES)


def _spaced_assignment(m: Spans, text: bytes) -> bytes | None:
    # ``aws_secret_access_key VALUE``, ``token VALUE``: a secret name, blanks, a value. Only
    # long secret words (and ``pwd`` / ``pw`` / ``pass``) and a value that looks like a
    # password: "token bucket", "key rotation", "pwd /home/x" are prose. After a password's
    # own name a shorter one will do (``passwd hunter2``: ``_password_shaped``). A full
    # stop or a closing bracket after the value ends the sentence (``_value_end``).
    name = _name_of(m, text, 1)
    kind = _name_kind(name)
    if kind not in (_SECRET, _WORKDIR) and _squash(name.lstrip("-")) != "pass":
        return None
    s, e = m[2]
    e = _value_end(text, s, e)
    value = text[s:e]
    if _keep_value(value) or not (_looks_like_password(value) or (_password_name(name) and _password_shaped(value))):
        return None
    return _replace_span(m, text, s, e)


_PASSWORD_WORDS = ("password", "passwd", "passphrase")


def _password_name(name: str) -> bool:
    """``name`` names a password itself (not a key or a token): it ends in password,
    passwd or passphrase (``DB_PASSWORD``, ``pass word``), or is ``pwd`` / ``pw``."""
    squashed = _squash(name.lstrip("-"))
    return squashed.endswith(_PASSWORD_WORDS) or squashed in ("pwd", "pw")


# Characters a word of prose holds besides letters (``case-sensitive``, ``and/or``, ``(see)``).
_WORDY = b"-_./()"


def _password_shaped(value: bytes) -> bool:
    """After a password's name and "is" / "was" or a blank: a value of 6 characters or
    more that holds a letter and a digit or a symbol other than ``_WORDY`` (``hunter2``,
    ``S3cret!``, ``p@ssword``), or only digits (a PIN: ``12345678``); not a path, not an
    algorithm's name in any casing (``md5``, ``SHA256``: ``_algorithm_name``). A word of
    letters (wrong, reset, required, expired ...), a shorter value (``v2``) and symbols
    alone (``******``) are prose or a mask, not a password."""
    if len(value) < 6 or value[:1] in (b"/", b"~") or _algorithm_name(value.upper()):
        return False
    others = value.translate(None, _LETTER_BYTES)
    if not others:
        return False  # a word
    if len(others) == len(value):
        return value.isdigit()
    return bool(others.translate(None, _WORDY))


def _known_password(m: Spans, text: bytes) -> bytes | None:
    # ``password letmein``: group 1 the name (a password's: ``bypass`` is none), group 3
    # one of ``_UNWORDED_PASSWORDS`` as a word of its own (``letmeinside``,
    # ``changeme_later`` go on: no password).
    if not is_secret_name(_name_of(m, text, 1)):
        return None
    after = text[m[3][1]:m[3][1] + 1]
    if after and (after.isalnum() or after in (b"_", b"-") or after[0] >= 0x80):
        return None
    return _replace_group(m, text, 3)


_UNWORDED = frozenset(p.encode() for p in _UNWORDED_PASSWORDS)


def _password_words(m: Spans, text: bytes) -> bytes | None:
    # A password's name, blanks, then "is" / "was" (and a colon or blanks) and a value
    # (group 2: "the password is V", "my password was V", "password is: V"), or a
    # well-known password (group 3: ``_known_password``). The value, less a full stop, a
    # comma or a closing bracket ending the sentence, is redacted when it is one of
    # ``_UNWORDED_PASSWORDS`` ("the default password is changeme") or, after a password's
    # own name (``_password_name``), shaped like one (``_password_shaped``): "the password
    # is wrong" stays.
    if m[2][0] < 0:
        return _known_password(m, text)
    name = _name_of(m, text, 1)
    if not is_secret_name(name):
        return None
    s, e = m[2]
    e = _value_end(text, s, e)
    value = text[s:e]
    if _keep_value(value):
        return None
    if value.lower() in _UNWORDED or (_password_name(name) and _password_shaped(value)):
        return _replace_span(m, text, s, e)
    return None


def _cjk_assignment(m: Spans, text: bytes) -> bytes | None:
    # ``密码=V`` / ``密码：V`` / ``"密码": "V"`` / ``密码是V``: the value quoted (group 2, 3)
    # or a run of printable ASCII (group 4; Chinese prose after the colon is no value).
    # After "is" alone (group 1), the name of an algorithm or a format (密钥是AES, 令牌是JWT,
    # 密码是MD5存储的: ``_algorithm_name``) is no value; other capitals and digits are
    # (密码是AB12CD). A full stop after a bare value ends the sentence (``_value_end``).
    g = next(g for g in (2, 3, 4) if m[g][0] >= 0)
    s, e = m[g]
    if g == 4:
        e = _value_end(text, s, e)
    value = text[s:e]
    if _keep_value(value) or (m[1][0] >= 0 and g == 4 and _algorithm_name(value)):
        return None
    return _replace_span(m, text, s, e)


# Names in capitals of algorithms, modes, formats and schemes that follow "the key is" /
# "the password is" in Chinese prose (密钥是AES, 私钥为PEM格式, 口令是OTP), with the key
# and digest sizes they are written with (AES256, SHA512, RSA2048). A value of capitals
# and digits that is none of these is taken for a secret (密码是AB12CD, 密码是AES123).
_ALGORITHM_NAMES = frozenset(name.encode() for name in (
    # ciphers, modes, key exchange and signatures
    "AES", "AES128", "AES192", "AES256", "DES", "3DES", "TDES", "SM1", "SM2", "SM3", "SM4",
    "RC2", "RC4", "RC5", "RC6", "CHACHA20", "POLY1305", "ECB", "CBC", "CFB", "OFB", "CTR",
    "GCM", "CCM", "XTS", "RSA", "RSA1024", "RSA2048", "RSA3072", "RSA4096", "DSA", "ECDSA",
    "ECDH", "ECDHE", "DH", "EC", "ECC", "EDDSA", "ED25519", "ED448", "X25519", "X448",
    # digests, MACs, password hashes
    "MD4", "MD5", "SHA", "SHA1", "SHA2", "SHA3", "SHA224", "SHA256", "SHA384", "SHA512",
    "CRC32", "HMAC", "BCRYPT", "SCRYPT", "ARGON2", "PBKDF2", "NTLM",
    # JWT algorithms and formats, encodings
    "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256",
    "JWT", "JWS", "JWE", "JWK", "JWKS", "PEM", "DER", "PKCS1", "PKCS5", "PKCS7", "PKCS8", "PKCS12",
    "P12", "PFX", "JKS", "CER", "CRT", "CSR", "X509", "ASN1", "PPK", "BASE64", "BASE32",
    "HEX", "ASCII", "UTF8", "JSON", "YAML", "XML",
    # schemes, services and words of prose
    "OTP", "TOTP", "HOTP", "PIN", "MFA", "2FA", "API", "OAUTH", "OAUTH2", "OIDC", "SAML",
    "LDAP", "SSO", "SSH", "SSL", "TLS", "GPG", "PGP", "KMS", "HSM", "IAM", "STS", "RAM",
    "CAM", "CA", "AK", "SK", "UUID", "GUID", "N/A", "NA", "TBD",
))
# Key and digest sizes written after a name and a "-" (SHA-256, RSA-2048, SHA3-512; the
# curves are written glued: ED25519, X25519).
_SIZES = frozenset(b"1 2 3 5 128 160 192 224 256 384 448 512 1024 2048 3072 4096".split())


def _algorithm_name(value: bytes) -> bool:
    """``value`` names algorithms or formats, not a secret: one of ``_ALGORITHM_NAMES``,
    or several joined by ``-`` or ``/`` where a part after the first may also be one of
    ``_SIZES`` (``SHA-256``, ``AES-256-GCM``, ``AK/SK``). Case matters: the names are
    written in capitals (a value with a small letter was never kept)."""
    if value in _ALGORITHM_NAMES:
        return True
    first, *rest = value.replace(b"/", b"-").split(b"-")
    return first in _ALGORITHM_NAMES and all(part in _ALGORITHM_NAMES or part in _SIZES for part in rest)


def _userinfo(m: Spans, text: bytes) -> bytes | None:
    # ``user:password@host`` without a scheme: the password must look like one (8+
    # characters, a letter and a digit), the host must not be a digest algorithm
    # (``image:v1.2.3@sha256:...``), and ``mailto:`` is an address.
    user, host = _group(m, text, 1), _group(m, text, 3)
    if user.lower() == b"mailto" or host.lower().startswith((b"sha", b"md5", b"blake")):
        return None
    return _replace_group(m, text, 2) if _looks_like_password(_group(m, text, 2)) else None


def _named_value(m: Spans, text: bytes) -> bytes | None:
    # ``<Password>V</Password>``, ``--password V``: group 1 the name, group 2 the value
    # (blanks around an element's value are no part of it).
    if not is_secret_name(_group(m, text, 1).decode("ascii", "replace")):
        return None
    return None if _keep_value(_group(m, text, 2).strip()) else _replace_group(m, text, 2)


def _paired_value(m: Spans, text: bytes) -> bytes | None:
    if not is_secret_name(_group(m, text, 1).decode("ascii", "replace")):
        return None
    g = next(g for g in (2, 3, 4) if m[g][0] >= 0)
    return None if _keep_value(_group(m, text, g).strip()) else _replace_group(m, text, g)


def _user_password(m: Spans, text: bytes) -> bytes | None:
    # ``-u user:password``; ``-u 1000:1000`` is a uid:gid (docker), not a credential.
    user, password = _group(m, text, 1), _group(m, text, 2)
    if user.isdigit() and password.isdigit():
        return None
    return _replace_group(m, text, 2)


# Words of 12+ letters that follow the scheme's name in prose ("Bearer authentication").
_BEARER_PROSE = (b"authentication", b"authorization", b"authorisation", b"certificates")


_PORT_CHARACTERS = b"0123456789:./"


def _spaced_password(m: Spans, text: bytes) -> bytes | None:
    # ``sqlcmd -P V``, ``mongosh -p V``, ``ldapsearch -w V``: the flag takes the password.
    # Groups: 1 a mysql command (``_mysql_password``); the value single-quoted (2),
    # double-quoted (3), after a quote left open on its line (4: up to a blank, a quote, a
    # backslash or a backtick) or bare (5: up to a blank or a character the shell reads,
    # ``;&|<>()`); 4 and 5 less a full stop or a comma that ends the sentence (``_value_end``).
    # A quote says a value follows (mysql's database is not quoted). A port mapping is
    # another command's (``docker run --name mongo -p 27017:27017``).
    g = next(g for g in (2, 3, 4, 5) if m[g][0] >= 0)
    s, e = m[g]
    if g >= 4:
        e = _value_end(text, s, e)
    value = text[s:e]
    if _keep_value(value) or (g == 5 and not value.translate(None, _PORT_CHARACTERS)):
        return None
    if m[1][0] >= 0 and g == 5 and not _mysql_password(value) and value.lower() not in KNOWN_PASSWORDS \
            and not (_mysql_client(m, text) and _word_follows(text[e:e + 64])):
        return None
    return _replace_span(m, text, s, e)


# The value of ``mysql -pPW`` and ``redis-cli -a PW`` (the older flag rules): quoted, or a
# bare shell word, which a backtick ends (a Markdown code span closes there). Glued to
# mysql's ``-p`` it does not start with ``-`` (``-p-`` is no password); after a blank it may.
# A quote left open on its line (``-a 'abc123``) opens a bare word (``_OPEN_QUOTE_VALUE``):
# tried after the closed quotes, so a quote closed further on the line reads as before.
_QUOTED_FLAG_VALUE = r"'([^'\x00\r\n]+)'|\"([^\"\x00\r\n]+)\""
_OPEN_QUOTE_VALUE = r"[\"']([^\s\"'\\\x00`]+)"
_GLUED_FLAG_VALUE = (r"(?:" + _QUOTED_FLAG_VALUE + "|" + _OPEN_QUOTE_VALUE
                     + r"|([^\s\"'\\\x00`-][^\s\"'\\\x00`]*))")
_FLAG_VALUE = r"(?:" + _QUOTED_FLAG_VALUE + "|" + _OPEN_QUOTE_VALUE + r"|([^\s\"'\\\x00`]+))"


def _flag_password(m: Spans, text: bytes, first: int = 1) -> bytes | None:
    # ``mysql -pPW``, ``redis-cli -a PW``, ``sshpass -p PW``, ``docker login -p PW``: the
    # value single-quoted (group ``first``), double-quoted (+1), after a quote left open
    # (+2) or bare (+3); the last two less a full stop, a comma or a closing bracket that
    # ends the sentence (``_value_end``). A variable (``-p"$MYSQL_PWD"``) stays.
    g = next(g for g in range(first, first + 4) if m[g][0] >= 0)
    s, e = m[g]
    if g >= first + 2:
        e = _value_end(text, s, e)
    return None if _keep_value(text[s:e]) else _replace_span(m, text, s, e)


# A shell word: quoted, or bare up to a blank, a quote, a backslash or a character the shell
# reads (``;&|<>()`); the operands of ``htpasswd`` and redis ``AUTH``.
_SHELL_WORD = r"(?:'[^'\x00\r\n]*'|\"[^\"\x00\r\n]*\"|[^\s\"'\\\x00;&|<>()`]+)"
# The value of redis ``AUTH [user] PW``: as ``_FLAG_VALUE``, bare up to what the shell reads.
_SHELL_VALUE = (r"(?:" + _QUOTED_FLAG_VALUE + "|" + _OPEN_QUOTE_VALUE
                + r"|([^\s\"'\\\x00;&|<>()`]+))")


def _htpasswd(m: Spans, text: bytes) -> bytes | None:
    # ``htpasswd -b FILE USER PW`` / ``htpasswd -nb USER PW``: with ``-b`` (batch) the last
    # operand is the password (``-B`` is bcrypt, ``-n`` writes to stdout: no file). Group 9
    # the flags, 10..12 the operands (a shell word each, quotes kept); the password's quotes
    # stay, a bare one loses a full stop or a bracket ending the sentence.
    flags = _group(m, text, 9)
    if b"b" not in flags:
        return None  # the password is prompted for
    s, e = m[11] if b"n" in flags else m[12]
    if s < 0:
        return None
    if text[s:s + 1] in (b"'", b'"'):
        s, e = s + 1, e - 1
    else:
        e = _value_end(text, s, e)
    return None if _keep_value(text[s:e]) else _replace_span(m, text, s, e)


def _command_password(m: Spans, text: bytes) -> bytes | None:
    # One pass for three command shapes: a flag and its password (groups 1..4: ``sshpass
    # -p``, ``redis-cli -a``, ``docker login -p``), redis ``AUTH [user] PW`` (5..8), and
    # ``htpasswd`` (9..12: ``_htpasswd``).
    if m[9][0] >= 0:
        return _htpasswd(m, text)
    return _flag_password(m, text, 1 if any(m[g][0] >= 0 for g in (1, 2, 3, 4)) else 5)


def _aws_prompt(m: Spans, text: bytes) -> bytes | None:
    # ``AWS Secret Access Key [None]: V`` / ``AWS Access Key ID [****************MPLE]: V``:
    # what ``aws configure`` echoes after its prompt is the key, whatever its shape (group
    # 1, less a full stop or a comma ending the sentence); a variable reference stays.
    s, e = m[1]
    e = _value_end(text, s, e)
    return None if _keep_value(text[s:e]) else _replace_span(m, text, s, e)


def _mysql_client(m: Spans, text: bytes) -> bool:
    """Group 1 is the mysql client itself (``mysql``, ``mariadb``), not ``mysqldump``,
    ``mysqladmin``, ``mariadb-dump`` (the pattern's group stops at ``mysql`` in those)."""
    end = m[1][1]
    return _group(m, text, 1).lower() in (b"mysql", b"mariadb") and text[end:end + 1] not in _NAME_GOES_ON


_NAME_GOES_ON = frozenset(bytes([c]) for c in _LETTER_BYTES + b"-_")


def _word_follows(after: bytes) -> bool:
    """After ``mysql -p WORD``: blanks, then another word (a letter or ``_`` first) on the
    line. The mysql client takes one database; a second word means the first was meant as
    the password (``mysql -p letmein shop``). Not for mysqldump (database, then tables)
    nor mysqladmin (commands). ``after``: the bytes after WORD, a bounded look."""
    rest = after.lstrip(b" \t")
    first = rest[:1]
    return len(rest) < len(after) and (first.isalpha() or first == b"_")


def _mysql_password(value: bytes) -> bool:
    """After ``mysql -p`` and a blank, mysql prompts and reads the next word as the
    database (the mysqladmin command): a password only when an agent meant one, which a
    name does not look like: a letter, and a digit or a symbol other than ``_ - .``
    (``hunter2``, not ``shop_db``, ``3306:3306``, ``<``)."""
    others = value.translate(None, _LETTER_BYTES)  # C speed: a value may be megabytes
    return len(others) < len(value) and bool(others.translate(None, b"_-."))


def _bearer(m: Spans, text: bytes) -> bytes | None:
    # ``Bearer TOKEN`` without a header name: a token has a digit or a symbol (8+
    # characters: ``abc.def.ghi``), or is long (24+ letters). After the scheme spelt as
    # HTTP spells it (``Bearer`` / ``BEARER``), 12 letters are a token too, unless they
    # are a word of prose (``_BEARER_PROSE``) or a capitalised one (a title). "the bearer
    # of this letter": "of" is too short. A full stop after the token ends the sentence.
    whole = _group(m, text, 1)
    token = whole.rstrip(b".")
    if len(token) < 8:
        return None
    if token.isalpha() and len(token) < 24:
        scheme = text[m[0][0]:m[0][0] + 6]
        if (len(token) < 12 or scheme not in (b"Bearer", b"BEARER") or token.lower() in _BEARER_PROSE
                or (token[:1].isupper() and token[1:].islower())):
            return None
    start, end = m[0]
    s, e = m[1]
    if text.startswith(_R, s):
        return None
    return text[start:s] + _R + text[s + len(token):end]


def _basic(m: Spans, text: bytes) -> bytes | None:
    # "basic plan" is prose; basic credentials are base64 of "user:password".
    token = _group(m, text, 1)
    try:
        decoded = base64.b64decode(token + b"=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _replace_group(m, text, 1) if b":" in decoded else None


def _base64_pem(m: Spans, text: bytes) -> bytes | None:
    # base64 of "-----BEGIN ..."; only a private key's is a secret (a certificate is not).
    first = _group(m, text, 1)
    head = first[: len(first) - len(first) % 4][:120]
    try:
        decoded = base64.b64decode(head)
    except (binascii.Error, ValueError):
        return None
    return _R if b"PRIVATE KEY" in decoded else None


_USER_CHARACTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@+-"


def _user_password_pair(text: bytes) -> bool:
    """``user:password`` (what ``Basic`` credentials encode) as a whole text: a user of
    at most 64 letters, digits and ``._@+-``, a password that looks like one (8+
    characters, a letter and a digit) with no blank. "hello:world" is no pair."""
    user, colon, password = text.partition(b":")
    return (bool(colon) and 0 < len(user) <= 64 and not user.translate(None, _USER_CHARACTERS)
            and password.split() == [password] and _looks_like_password(password))


def _whole(m: Spans, text: bytes) -> bytes | None:
    return None if m[1][0] >= 0 else _R


# Provider prefixes in other casings (``GHP_``, ``Ghp_``, ``GITHUB_PAT_``, ``GLPAT-``,
# ``HF_``, ``NPM_``): the real prefixes are lower case, but a prefix shouted by a log or a
# hand still carries the secret, its body. The body decides: a real one is random base62,
# so it holds a lower-case letter (36 characters without one: about 3 in a billion); a
# body of capitals and digits is a constant's name or an id, not a token. Group 1..5: the
# body after each prefix. The lower-case prefixes are left to ``SPAN_PATTERNS``.
_CASED_PREFIX_PATTERN = (r"(?i:gh[pousr])[_-]([A-Za-z0-9]{36,})|(?i:github_pat)_([A-Za-z0-9_]{22,})"
                         r"|(?i:glpat)-([A-Za-z0-9_-]{20,})|(?i:hf)_([A-Za-z0-9]{30,})"
                         r"|(?i:npm)_([A-Za-z0-9]{36,})")


def _cased_prefix(m: Spans, text: bytes) -> bytes | None:
    g = next(g for g in (1, 2, 3, 4, 5) if m[g][0] >= 0)
    prefix, body = text[m[0][0]:m[g][0]], _group(m, text, g)
    if prefix.lower() == prefix:
        return None  # the real prefix: the span patterns' (a body of capitals included)
    return _R if body.upper() != body else None  # a lower-case letter in the body


Handler = Callable[[Spans, bytes], "bytes | tuple[bytes, int] | None"]
"""A match's replacement, or ``None`` to keep it; or ``(replacement, stop)``: what replaces
the text from the match's start to ``stop`` (before its end), the search going on from
``stop`` (``_assignment``)."""


@dataclass(frozen=True)
class Rule:
    """One pass: ``pattern`` (RE2 syntax) finds candidates, ``handle`` returns the
    replacement of a match, or ``None`` to keep it as it is."""

    name: str
    pattern: str
    handle: Handler


RULES: tuple[Rule, ...] = (
    Rule("provider keys and private keys",
         "(" + _KEEP_PATTERN + ")|" + "|".join(f"(?:{p})" for _, p in SPAN_PATTERNS), _whole),
    Rule("provider key, prefix in capitals", _CASED_PREFIX_PATTERN, _cased_prefix),
    Rule("base64-encoded private key",
         r"(LS0tLS1CRUdJTi[A-Za-z0-9+/=]*)(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{4,})*",
         _base64_pem),
    # user:password@host; the password runs to the last @ before the host (a password
    # may hold @ / # unescaped), so nothing of it survives.
    Rule("password in a url",
         r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\"'<>\\\x00]*:([^\s\"'<>\\\x00]*)"
         r"@[A-Za-z0-9._~-]", lambda m, t: _replace_group(m, t, 1)),
    # user:password@host with no scheme in front (``_userinfo`` decides).
    Rule("password in userinfo without a scheme",
         r"([A-Za-z0-9._-]+):([^\s:/@\"'<>\\\x00]+)@([A-Za-z0-9][A-Za-z0-9.-]*)", _userinfo),
    # Authorization headers: the whole credential after the header name (and scheme).
    Rule("authorization header",
         r"(?i:proxy-authorization|authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
         r"(?:(?i:digest)[ \t]+([^\r\n\x00]+)|(?:(?i:basic|bearer|token|negotiate|ntlm|apikey|"
         r"sharedkey|aws4-hmac-sha256)[ \t]+)?([^\s\"'\\\x00][^\r\n\"'\\\x00]*))",
         lambda m, t: _replace_group(m, t, 1 if m[1][0] >= 0 else 2)),
    # The value starts at its first non-blank character: blanks alone are no value (and a
    # header name followed by megabytes of blanks is then no match, read at DFA speed).
    Rule("cookie header",
         r"(?i:set-cookie|cookie)\\?[\"']?[ \t]*:[ \t]*\\?[\"']?([^\s\"'\\\x00][^\r\n\"'\\\x00]*)",
         lambda m, t: _replace_group(m, t, 1)),
    Rule("bearer token", r"(?i:bearer)[ \t]+([A-Za-z0-9._~+/=-]{8,})", _bearer),
    Rule("basic credentials", r"(?i:basic)[ \t]+([A-Za-z0-9+/]{8,}={0,2})", _basic),
    Rule("curl -u user:password",
         r"(?:--user|--proxy-user|-u)[ \t=]*[\"']?([^\s:\"'\\\x00]*):([^\s\"'\\\x00]+)",
         _user_password),
    # The password glued to ``-p`` or after the flag and blanks: single-quoted (group 1),
    # double-quoted (2) or bare (3: to a blank, a quote, a backslash or a backtick, less
    # the full stop or comma ending the sentence): ``_flag_password``.
    Rule("mysql -pPASSWORD",
         r"(?i:mysql|mysqldump|mysqladmin|mariadb|mysqlsh)[^\r\n|;&\x00]*?[ \t]-p" + _GLUED_FLAG_VALUE,
         _flag_password),
    # Also redis ``AUTH [user] PW`` on a redis-cli line or after redis-cli's prompt
    # (``127.0.0.1:6379> AUTH PW``, ``host:6379[2]>``): the last word is the password; and
    # ``htpasswd -b`` (a few flags at most: a match stays short): ``_command_password``.
    Rule("sshpass / redis-cli / docker login / htpasswd password",
         r"(?:sshpass[ \t]+-p|redis-cli[^\r\n|;&\x00]*?[ \t]-a|docker[ \t]+login[^\r\n|;&\x00]*?[ \t]"
         r"(?:-p|--password))[ \t]+" + _FLAG_VALUE
         + r"|(?:redis-cli[^\r\n|;&\x00]*?[ \t]|[0-9A-Za-z.-]+:[0-9]+(?:\[[0-9]+\])?>[ \t]*)(?i:auth)[ \t]+"
         r"(?:" + _SHELL_WORD + r"[ \t]+)?" + _SHELL_VALUE
         + r"|htpasswd((?:[ \t]+(?:-C[ \t]+[0-9]+|-[A-Za-z]+)){1,6})[ \t]+(" + _SHELL_WORD + r")(?:[ \t]+("
         + _SHELL_WORD + r"))?(?:[ \t]+(" + _SHELL_WORD + r"))?", _command_password),
    # A flag, a blank, the password: commands whose flag takes it (mysql's does not, but
    # agents write it so: ``_mysql_password``). Not ``-p`` alone: a port (docker, ssh,
    # psql), parents (mkdir), preserve (cp). Group 1 names the family for the handler.
    Rule("password flag, blank, password",
         r"(?:((?i:mysql|mysqldump|mysqladmin|mariadb|mysqlsh))[^\r\n|;&\x00]*?[ \t]-p"
         r"|(?:mongo(?:sh|dump|restore|export|import|stat|top|files)?|cqlsh|rabbitmqadmin"
         r"|(?:az|oc|cf)[ \t]+login)(?:[ \t][^\r\n|;&\x00]*?)?[ \t]-p"
         r"|(?:sqlcmd|bcp|osql|ipmitool)(?:[ \t][^\r\n|;&\x00]*?)?[ \t]-P"
         r"|ldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn|exop|url)(?:[ \t][^\r\n|;&\x00]*?)?[ \t]-w)"
         r"[ \t]+(?:" + _QUOTED_FLAG_VALUE + "|" + _OPEN_QUOTE_VALUE
         + r"|([^\s\"'\\\x00;&|<>()`-][^\s\"'\\\x00;&|<>()`]*))",
         _spaced_password),
    Rule("--secret-flag value",
         r"--(" + _NAME + r")[ \t]+[\"']?([^\s\"'\\\x00-][^\s\"'\\\x00]*)", _named_value),
    Rule("secret-named word, blanks, value",
         r"(" + _NAME + r")(?:[ \t]|\\t)+(" + _VALUE + r"*[0-9]" + _VALUE + r"*)", _spaced_assignment),
    # A password's name, blanks, then "is" / "was" and a value ("the password is V", group
    # 2) or a well-known password ("password letmein", group 3): ``_password_words``.
    Rule("password name, is or blanks, a password",
         r"([A-Za-z0-9_.-]*(?i:pass[ _.-]?word|passwd|pass[ _.-]?phrase|pass|pwd?))(?:[ \t]|\\t)+"
         r"(?:(?i:is|was)(?:[ \t]*:[ \t]*|[ \t]+)(" + _VALUE + r"+)|((?i:" + "|".join(_UNWORDED_PASSWORDS)
         + r")))", _password_words),
    Rule("xml element", r"<(" + _NAME + r")>([^<\x00]+)</", _named_value),
    # {"name": "DB_PASSWORD", "value": "V"} / "- name: DB_PASSWORD\n  value: V" (the
    # text of the entries ``_PAIRS`` describes): group 1 the name; the value in group 2
    # (double quotes, also JSON-escaped), 3 (single quotes) or 4 (unquoted, to the line end).
    Rule("secret name beside its value",
         r"(?i:name|key|parameterkey)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(" + _NAME + r")\\?[\"']?[ \t]*"
         r"(?:,|\r?\n|\\n)[ \t]*\\?[\"']?(?i:value|parametervalue)\\?[\"']?[ \t]*[:=][ \t]*"
         r"(?:\\?\"([^\"\\\x00\r\n]+)|'([^'\x00\r\n]+)|([^\s\"'\\,}\]\x00][^\r\n\"'\\,}\]\x00]*))",
         _paired_value),
    # ``密码=V``, ``密码：V``, also "the password is V": ``密码是V`` / ``密码为V`` (group 1).
    Rule("chinese secret name, value",
         "(?:" + "|".join(_CJK_SECRET_WORDS) + r")\\?[\"']?[ \t]*(?:" + _CJK_IS + r"?[ \t]*(?:[:=]|：|＝)|("
         + _CJK_IS + r"))[ \t]*(?:\\?\"([^\"\\\x00\r\n]+)|'([^'\x00\r\n]+)|([!#-%(-+\--:=?-\[^-|~]+))",
         _cjk_assignment),
    # aws configure's prompts: the current value in brackets, "None" or 16 stars and its
    # last four characters (nothing else: "the key [see below]: rotate it" is prose).
    Rule("aws configure prompt",
         r"(?i:aws[ \t]+(?:secret[ \t]+access[ \t]+key|access[ \t]+key[ \t]+id)[ \t]+\[(?:none|\*+[^\]\s\x00]{0,4})\])"
         r"[ \t]*:[ \t]*[\"']?([^\s\"'\\\x00]+)", _aws_prompt),
    Rule("secret-named assignment",
         r"(" + _NAME + r")(\\?[\"']?[ \t]*(?::=|=>|[:=]|%3[dD])[ \t]*)"
         r"(?:\"((?:[^\"\\\x00\r\n]|\\[^\x00\r\n])*)\"|'([^'\x00\r\n]*)'|\\\"([^\"\x00]*?)\\\""
         r"|\"([^\"\x00\r\n]+)|(?i:bearer)[ \t]+(" + _VALUE + r"+)|(" + _UNQUOTED_VALUE + r"))", _assignment),
)


# --------------------------------------------------------------------------- the redactor


@dataclass(frozen=True)
class Summary:
    """A stored summary: ``text`` (at most the limit) and ``length``, the characters of
    the whole serialised value before the cut (``None`` when there is no value)."""

    text: str | None
    length: int | None

    @property
    def cut(self) -> bool:
        """True when ``text`` is shorter than the value it summarises."""
        return self.text is not None and self.length is not None and self.length > len(self.text)


def serialise(value: Any) -> str | None:
    """Strings as they are, anything else as JSON (UTF-8 characters kept); ``None`` stays."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def cut(value: Any, limit: int = SUMMARY_LIMIT) -> Summary:
    """``serialise(value)`` cut to ``limit`` characters, with the length before the cut
    (SPEC 4, 10). Redact first: this does not."""
    text = serialise(value)
    if text is None:
        return Summary(None, None)
    return Summary(text[:limit], len(text))


# Candidates one rule may examine in one text (or one document's texts joined, see
# ``many``: at most three groups of them). Each costs a few microseconds in Python, so a
# body made of nothing but six-byte secrets ("pwd=x ", 1.4 million in 8 MiB) would hold
# a worker for seconds; past this many, the rest of the text from the next candidate on,
# and every later text of the document's group, is replaced whole by ``[redacted]``:
# nothing leaks, the cost stays bounded (benchmarks/redaction.py), and a text holding
# that many secrets is no text to review.
DENSE_LIMIT = 20_000
# Secrets found in the decoded view of one text (``Redactor._with_view``) where decoding
# changed the text around them: each costs a walk of up to ``encoded_text.CHUNK`` bytes
# to find its place; past this many, the rest of the text from the next one on is
# replaced whole (as past ``DENSE_LIMIT``). Secrets in stretches with nothing decoded
# (plain secrets in a long text with one escape) cost nothing and count for nothing.
ENCODED_LIMIT = 1_000


_BASE64_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_RUN_GOES_ON = _BASE64_BYTES | {0x3D}  # "=": base64 padding


def _aws_secret(data: bytes, start: int, end: int) -> bool:
    """``data[start:end]`` (a run of base64) may be an AWS secret access key: the run is
    whole (no base64 character before it, none nor ``=`` after it) and holds a capital,
    a small letter and a digit or ``+ /`` (40 random characters lack one of these about
    once in 4,000: a key id near it makes the pair a secret; an identifier of letters,
    a hash of one case, does not)."""
    if (start > 0 and data[start - 1] in _BASE64_BYTES) or (end < len(data) and data[end] in _RUN_GOES_ON):
        return False
    run = data[start:end]
    return run.upper() != run and run.lower() != run and not run.isalpha()


def _dense_tail(data: bytes, start: int) -> bytes:
    """``[redacted]`` for what is left of the text at ``start`` and for each later text
    (the NUL separators of ``many`` stay, so every text keeps its place)."""
    return _SEP.encode().join([_R] * (data.count(_SEP.encode(), start) + 1))


def _plain(text: str) -> bool:
    """True when ``text`` has nothing to decode (``encoded_text.views`` gives none): ASCII
    without "%", "&" or a backslash. Checked at C speed (no scan of the text in Python)."""
    return text.isascii() and "%" not in text and "&" not in text and "\\" not in text


def _groups(texts: Sequence[str]) -> list[list[int]]:
    """The positions of ``texts`` in the groups ``Redactor.many`` joins apart (the empty
    ones left out), in this order: texts with nothing to decode (``_plain``), texts
    holding a "%", the others. A "+" reads as a space in a text holding a "%"
    (``encoded_text``): those are joined apart so each reads as it would alone. The plain
    ones, because the view of a joined text decodes all of it: one "&" or one non-ASCII
    character in a batch of stored texts would cost every text of it the decoding
    (``str.translate`` of each character), which a text scanned alone never pays."""
    plain: list[int] = []
    encoded: list[int] = []
    other: list[int] = []
    for i, text in enumerate(texts):
        (plain if _plain(text) else encoded if "%" in text else other).append(i)
    return [group for group in (plain, encoded, other) if group]


def _digest_key(id_key: bytes) -> bytes:
    # BLAKE2b keys are at most 64 bytes: the app's secret of any length is hashed to 32.
    return hashlib.blake2b(id_key, digest_size=32).digest() if id_key else b""


class Redactor:
    """The rules compiled with an engine; every method is pure given the engine and the
    ``id_key`` of the key digests. Build one per process (compiling costs milliseconds)."""

    def __init__(self, compile: Compile, id_key: bytes = b"", rules: Sequence[Rule] = RULES) -> None:
        self._compiled = tuple((compile(rule.pattern.encode()), rule.handle) for rule in rules)
        # Base64 of text is scanned with the same rules (none: nothing to scan it with).
        self._base64 = compile(base64_text.PATTERN.encode()) if rules else None
        self._hex = compile(hex_text.PATTERN.encode()) if rules else None
        self._aws = (compile(AWS_KEY_ID.encode()), compile(AWS_SECRET_RUN.encode())) if rules else None
        self._id_key = _digest_key(id_key)

    def with_id_key(self, id_key: bytes) -> Redactor:
        """The same rules (compiled once), with ``id_key`` keying the digests of redacted keys."""
        other = copy.copy(self)
        other._id_key = _digest_key(id_key)
        return other

    # ----------------------------------------------------------------- texts

    def _bytes(self, data: bytes, passes: list[list[tuple[int, int, int]]] | None = None,
               base64_levels: int = 2) -> bytes:
        # ``passes`` (when given) gets, per rule, what it replaced: ``(start, end, length)``
        # of the text as the rule saw it (``encoded_text.replaced_spans``).
        if self._aws is not None:
            data = self._aws_pairs(data, passes)
        for compiled, handle in self._compiled:
            search = compiled.search
            pieces: list[bytes] = []
            edits: list[tuple[int, int, int]] = []
            last = pos = found = 0
            size = len(data)
            while pos <= size:
                spans = search(data, pos)
                if spans is None:
                    break
                start, end = spans[0]
                found += 1
                if found > DENSE_LIMIT:
                    pieces.append(data[last:start])
                    pieces.append(_dense_tail(data, start))
                    edits.append((start, size, len(pieces[-1])))
                    last = size
                    break
                pos = end if end > start else end + 1  # no rule matches "", but never loop
                new = handle(spans, data)
                if isinstance(new, tuple):
                    new, end = new
                    pos = end  # the rest of the match is read again (``_assignment``)
                if new is not None:
                    pieces.append(data[last:start])
                    pieces.append(new)
                    if passes is not None:
                        a, b = encoded_text.changed(data[start:end], new)
                        edits.append((start + a, start + b, len(new) - a - (end - start - b)))
                    last = end
            if passes is not None:
                passes.append(edits)
            if pieces:
                pieces.append(data[last:])
                data = b"".join(pieces)
        return data if self._base64 is None or not base64_levels else self._base64_runs(data, passes, base64_levels)

    def _aws_pairs(self, data: bytes, passes: list[list[tuple[int, int, int]]] | None) -> bytes:
        """``data`` with each AWS secret access key beside its key id replaced (the ids are
        left to the span rule): a maximal run of exactly 40 base64 characters (no ``=``
        after it) holding a capital, a small letter and a digit or ``+ /`` (a git hash, 40
        hex, has no capital and small letter both), within ``AWS_NEAR`` bytes before or
        after an id in the same text (no NUL of ``many`` between). A bare 40-character run
        without an id near it stays (tests/unit/test_redaction_reported.py).

        Linear: the windows around the ids are scanned once each, merged where they
        overlap (each later one from where the last stopped, less 40 bytes, so a key across
        the seam is seen whole); past ``DENSE_LIMIT`` ids the span rule redacts the rest."""
        find_id, find_run = self._aws[0].search, self._aws[1].search  # type: ignore[index]
        sep = _SEP.encode()
        size = len(data)
        keys: list[tuple[int, int]] = []
        pos = scanned = ids = 0
        while ids <= DENSE_LIMIT and (spans := find_id(data, pos)) is not None:
            start, pos = spans[0]
            ids += 1
            lo = max(start - AWS_NEAR, 0, scanned - 40)
            lo = max(lo, data.rfind(sep, lo, start) + 1)
            hi = min(pos + AWS_NEAR, size)
            nul = data.find(sep, pos, hi)
            hi = hi if nul < 0 else nul
            window = data[lo:hi]
            at = 0
            while (run := find_run(window, at)) is not None:
                rs, at = run[0]
                a, b = lo + rs, lo + at
                if b - a == 40 and (not keys or keys[-1][0] < a) and _aws_secret(data, a, b):
                    keys.append((a, b))
            scanned = max(scanned, hi)
        if passes is not None:
            passes.append([(a, b, len(_R)) for a, b in keys])
        if not keys:
            return data
        pieces: list[bytes] = []
        last = 0
        for a, b in keys:
            pieces += [data[last:a], _R]
            last = b
        pieces.append(data[last:])
        return b"".join(pieces)

    def _base64_runs(self, data: bytes, passes: list[list[tuple[int, int, int]]] | None, levels: int) -> bytes:
        """``data`` with each run of base64 whose text (``base64_text``) holds a secret the
        rules find, or is a ``user:password`` pair, replaced whole; the texts are scanned
        in one pass, and their own base64 runs for ``levels - 1`` levels more (text inside
        base64 inside text inside base64; each level 3/4 of the one above at most).
        Past ``DENSE_LIMIT`` runs that decode to text, the rest of the text is replaced
        (a run that does not costs one C-speed decoding and counts for nothing)."""
        runs: list[tuple[int, int, bytes]] = []
        search = self._base64.search  # type: ignore[union-attr]
        pos, size, dense = 0, len(data), None
        while (spans := search(data, pos)) is not None:
            start, pos = spans[0]
            if len(runs) == DENSE_LIMIT:
                dense = start
                break
            decoded = base64_text.text_of(data, start, pos)
            if decoded is None and (later := base64_text.after_slash(data, start, pos)) is not None:
                start, decoded = later, base64_text.text_of(data, later, pos, slash_before=True)
            if decoded is not None:
                runs.append((start, pos, decoded))
        runs, dense = self._hex_runs(data, runs, dense)
        if not runs and dense is None:
            return data
        texts = self._bytes(_SEP.encode().join(r[2] for r in runs), base64_levels=levels - 1).split(
            _SEP.encode()) if runs else []
        if len(texts) != len(runs):  # a scan past its own bound: take every run
            texts = [b""] * len(runs)
        edits = [(start, end, _R) for (start, end, decoded), text in zip(runs, texts, strict=True)
                 if text != decoded or _user_password_pair(decoded)]
        if dense is not None:
            edits.append((dense, size, _dense_tail(data, dense)))
        if passes is not None:
            passes.append([(start, end, len(new)) for start, end, new in edits])
        pieces: list[bytes] = []
        last = 0
        for start, end, new in edits:
            pieces += [data[last:start], new]
            last = end
        pieces.append(data[last:])
        return b"".join(pieces)

    def _hex_runs(self, data: bytes, runs: list[tuple[int, int, bytes]], dense: int | None
                  ) -> tuple[list[tuple[int, int, bytes]], int | None]:
        """``runs`` (of base64, in order) with the runs of hex digits that decode to text
        (``hex_text``) added, in order, none overlapping another (the first kept), none
        from ``dense`` on; past ``DENSE_LIMIT`` runs in all, ``dense`` moves to the next."""
        found: list[tuple[int, int, bytes]] = []
        search = self._hex.search  # type: ignore[union-attr]
        pos, limit = 0, len(data) if dense is None else dense
        while pos < limit and (spans := search(data, pos)) is not None:
            start, pos = spans[0]
            if start >= limit:
                break
            if len(runs) + len(found) == DENSE_LIMIT:
                dense = limit = start
                break
            decoded = hex_text.text_of(data, start, pos)
            if decoded is not None:
                found.append((start, pos, decoded))
        if dense is not None:
            # The bound moved to a hex match not yet decoded (any run of digits, even one
            # inside a base64 run: "d3d3..." is base64 of "www..."). A base64 run it falls
            # inside goes with the rest whole: dropped at the bound, its start would stay
            # in clear, the beginning of what it encodes (a secret) with it.
            for run in runs:
                if run[0] < limit < run[1]:
                    dense = limit = run[0]
                    break
        if not found:
            # ``dense`` may have moved to a hex run before the base64 runs' own bound: the
            # runs past it go with the rest of the text (kept, one of them holding a secret
            # wrote the text before it back in clear, the hex run there included).
            return [run for run in runs if run[1] <= limit], dense
        merged: list[tuple[int, int, bytes]] = []
        for run in sorted(runs + found):
            if run[1] > limit:
                continue
            if merged and run[0] < merged[-1][1]:
                continue
            merged.append(run)
        return merged, dense

    def _with_view(self, data: bytes, views: Sequence[encoded_text.View]) -> bytes:
        """``data`` redacted, with what the rules find in its decoded views (``views``:
        percent escapes, zero-width characters ...; ``encoded_text``) redacted too, at the
        bytes of ``data`` it came from; past ``ENCODED_LIMIT`` secrets found in a view where
        decoding changed the text, the rest of it. All scans read ``data`` as it came (a
        scan of text redacted first could take a label's encoded quote for a value and hide
        the secret behind it), and the spans of all are replaced."""
        passes: list[list[tuple[int, int, int]]] = []
        self._bytes(data, passes)
        spans = encoded_text.replaced_spans(passes)
        for seen in views:
            passes = []
            self._bytes(seen.data, passes)
            for start, end in encoded_text.replaced_spans(passes):
                if seen.walks >= 2 * ENCODED_LIMIT:  # two positions each
                    spans.append((seen.original(start, end)[0], len(data)))
                    break
                span = seen.original(start, end)
                if not encoded_text.look_alikes_only(data[span[0]:span[1]]):
                    spans.append(span)
        if not spans:
            return data
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:  # overlapping spans are one (touching: two)
                merged[-1][1] = max(merged[-1][1], end)
            elif start < end:
                merged.append([start, end])
        pieces: list[bytes] = []
        last = 0
        sep = _SEP.encode()
        for start, end in merged:
            # A NUL of ``many`` inside the span stays, so every text keeps its place.
            pieces += [data[last:start], sep.join([_R] * (data.count(sep, start, end) + 1))]
            last = end
        pieces.append(data[last:])
        return b"".join(pieces)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted]`` (SPEC 4). Linear time."""
        if not text:
            return text
        data = text.encode("utf-8", "surrogatepass")
        seen = encoded_text.views(data)
        out = self._with_view(data, seen) if seen else self._bytes(data)
        return text if out is data else out.decode("utf-8", "surrogatepass")

    def many(self, texts: Sequence[str]) -> list[str]:
        """``[self.text(t) for t in texts]`` in one pass per rule over all of them (over
        each of ``_groups``: texts with nothing to decode, with a "%", the others)."""
        if not texts:
            return []
        if any(_SEP in t for t in texts):  # only imports can carry NUL; one at a time
            return [self.text(t) for t in texts]
        groups = _groups(texts)
        if len(groups) == 1:
            return self._joined(texts)
        out = list(texts)
        for group in groups:
            for i, new in zip(group, self._joined([texts[i] for i in group]), strict=True):
                out[i] = new
        return out

    def _joined(self, texts: Sequence[str]) -> list[str]:
        joined = _SEP.join(texts)
        out = self.text(joined)
        if out is joined:
            return list(texts)
        parts = out.split(_SEP)
        if len(parts) != len(texts):  # no rule may cross the separator; never lose a text
            return [self.text(t) for t in texts]
        return parts

    def key(self, key: str, limit: int | None = None) -> str:
        """``key`` (an id or a name) redacted; when redaction changed it, ``~`` and a
        16-hex keyed digest of the original are appended, so the result stays unique and
        stable (module doc). ``limit`` bounds the result's length."""
        return self._key(key, self.text(key), limit)

    def _key(self, original: str, redacted: str, limit: int | None) -> str:
        if redacted == original:
            return original
        digest = hashlib.blake2b(original.encode("utf-8", "surrogatepass"), key=self._id_key,
                                 digest_size=KEY_DIGEST_HEX // 2).hexdigest()
        room = None if limit is None else max(0, limit - KEY_DIGEST_HEX - 1)
        return f"{redacted[:room]}~{digest}"

    # ----------------------------------------------------------------- structures

    def value(self, value: Any) -> Any:
        """A deep copy of the JSON-like ``value`` with every string and every object key
        redacted (keys as ``key``); a value under a secret-named key is replaced whole,
        unless it is a boolean or null. Numbers pass unchanged elsewhere."""
        return self._document(lambda leaf: _deep(value, leaf))

    def _document(self, walk: Callable[[Leaf], Any]) -> Any:
        # Walk once collecting every string, redact them all in one pass, walk again
        # putting the results in place (the walk is deterministic, so the order matches).
        found: list[str] = []
        walk(lambda text, limit=None: found.append(text) or text)
        results = iter(self.many(found))

        def emit(text: str, limit: int | None = None) -> str:
            redacted = next(results)
            if limit is None:
                return redacted
            return self._key(text, redacted, None if limit == _NO_LIMIT else limit)

        return walk(emit)

    def run_document(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """A run document (``schemas/run_document.schema.json``) with every text redacted:
        query, answer, alert, outcome, messages (content, ids, citations, tool-call ids,
        extra), steps (ids, names, summaries), report, tool calls (ids, tool names,
        arguments, output, error, step ids, retrieval evidence), evaluations and the
        orchestration trace. ``run_id`` and ``session_id`` are the run's own address and
        stay as sent (the schema restricts ``run_id`` to one URL segment)."""
        return self._document(lambda leaf: _run_document(doc, leaf))

    def tool_event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """A tool-call event (``schemas/tool_event.schema.json``) with its id, tool name,
        step id, arguments, output, error and retrieval evidence redacted."""
        return self._document(lambda leaf: _tool_call(event, leaf))

    def finish(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """A finish body (``schemas/run_finish.schema.json``) with its answer redacted."""
        return self._document(lambda leaf: _fields(body, leaf, texts=("answer",)))


# A leaf callback: (text, limit=None) -> text. ``limit`` None: a text; an int: a key of at
# most that many characters (``_NO_LIMIT``: an object key, unbounded).
Leaf = Callable[..., str]
_NO_LIMIT = -1
ID_LIMIT = 160  # characters of an agent's id (schemas)
TOOL_NAME_LIMIT = 200
# Texts the schemas bound to a column's width (characters): redacted, then cut there,
# since ``[redacted]`` is longer than a short secret it replaces (``pwd=x``).
OUTCOME_LIMIT = 32  # external_outcome
STEP_NAME_LIMIT = 300
STEP_STATUS_LIMIT = 32


# An entry that names a secret in one field and holds it in another: Kubernetes / ECS
# env lists ``{"name": "DB_PASSWORD", "value": ...}``, SSM parameters, Postman headers
# ``{"key": "X-Api-Key", "value": ...}``, CloudFormation ``ParameterKey`` / ``ParameterValue``.
_PAIRS = (("name", "value"), ("Name", "Value"), ("key", "value"), ("Key", "Value"),
          ("ParameterKey", "ParameterValue"))


def _paired_secret(entry: Mapping[Any, Any]) -> frozenset[str]:
    """The value fields of ``entry`` whose name field names a secret (usually none)."""
    found = frozenset()
    for name_field, value_field in _PAIRS:
        name = entry.get(name_field)
        if isinstance(name, str) and value_field in entry and is_secret_name(name):
            found |= {value_field}
    return found


def _deep(value: Any, leaf: Leaf) -> Any:
    if isinstance(value, str):
        return leaf(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        paired = _paired_secret(value)
        for key, item in value.items():
            name = key if isinstance(key, str) else str(key)
            new_key = leaf(name, _NO_LIMIT)
            if item is not None and not isinstance(item, bool) and (is_secret_name(name) or name in paired):
                out[new_key] = REDACTED
            else:
                out[new_key] = _deep(item, leaf)
        return out
    if isinstance(value, (list, tuple)):
        return [_deep(item, leaf) for item in value]
    return value


def _key(value: Any, leaf: Leaf, limit: int) -> Any:
    return leaf(value, limit) if isinstance(value, str) else value


def _fields(doc: Mapping[str, Any], leaf: Leaf, *, texts: Iterable[str] = (),
            bounded: Mapping[str, int] | None = None, keys: Mapping[str, int] | None = None,
            deep: Iterable[str] = ()) -> dict[str, Any]:
    """A copy of ``doc`` with ``texts`` fields redacted as text, ``bounded`` fields as text
    cut to the given limit after redaction, ``keys`` fields as keys of the given limit,
    ``deep`` fields as JSON values; other fields as they are."""
    out = dict(doc)
    for name in texts:
        if isinstance(out.get(name), str):
            out[name] = leaf(out[name])
    for name, limit in (bounded or {}).items():
        if isinstance(out.get(name), str):
            out[name] = leaf(out[name])[:limit]
    for name, limit in (keys or {}).items():
        if name in out:
            out[name] = _key(out[name], leaf, limit)
    for name in deep:
        if name in out:
            out[name] = _deep(out[name], leaf)
    return out


def _list(items: Any, each: Callable[[Any], Any]) -> Any:
    return [each(item) if isinstance(item, Mapping) else item for item in items] \
        if isinstance(items, list) else items


def _tool_call(call: Mapping[str, Any], leaf: Leaf) -> dict[str, Any]:
    return _fields(call, leaf, keys={"id": ID_LIMIT, "tool_name": TOOL_NAME_LIMIT, "step_id": ID_LIMIT},
                   deep=("arguments", "output", "error", "retrieval"))


def _message(message: Mapping[str, Any], leaf: Leaf) -> dict[str, Any]:
    out = _fields(message, leaf, texts=("content",), keys={"id": ID_LIMIT})
    meta = message.get("metadata")
    if isinstance(meta, Mapping):
        new = _fields(meta, leaf, deep=("extra",))
        if "citations" in meta:
            new["citations"] = _list(meta["citations"], lambda c: _fields(
                c, leaf, keys={"id": ID_LIMIT}, texts=("title", "source", "excerpt", "evidence_ref")))
        if isinstance(meta.get("tool_call_ids"), list):
            new["tool_call_ids"] = [_key(i, leaf, ID_LIMIT) for i in meta["tool_call_ids"]]
        out["metadata"] = new
    return out


def _run_document(doc: Mapping[str, Any], leaf: Leaf) -> dict[str, Any]:
    out = _fields(doc, leaf, texts=("query", "answer"), bounded={"external_outcome": OUTCOME_LIMIT},
                  deep=("alert", "external_outcome_detail", "verifier_evaluation",
                        "aiops_rule_evaluation", "self_evaluation", "orchestration_trace"))
    out["messages"] = _list(doc.get("messages"), lambda m: _message(m, leaf))
    out["steps"] = _list(doc.get("steps"), lambda s: _fields(
        s, leaf, keys={"id": ID_LIMIT}, texts=("summary",),
        bounded={"name": STEP_NAME_LIMIT, "status": STEP_STATUS_LIMIT}))
    out["tool_calls"] = _list(doc.get("tool_calls"), lambda c: _tool_call(c, leaf))
    for name in ("messages", "steps", "tool_calls"):
        if name not in doc:
            del out[name]
    report = doc.get("report")
    if isinstance(report, str):
        out["report"] = leaf(report)
    elif isinstance(report, Mapping):
        out["report"] = _fields(report, leaf, texts=("content",))
    return out


def iter_strings(value: Any) -> Iterator[str]:
    """Every string of a JSON-like value, object keys included (for tests and checks)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from iter_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from iter_strings(item)
