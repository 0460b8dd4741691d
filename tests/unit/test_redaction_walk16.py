"""Leaks and over-redaction a new user's walk found in session 16 (SPEC 4), each stored as
a run's query and a tool call's result: "the password is V" / "my password was V" and
"passwd V" with a short value, ``pw: V``, redis ``AUTH``, ``htpasswd -b``, ``mongosh -p``
right after the command name; a closing bracket after a bare value swallowed with it,
and MySQL's "(using password: YES)". Outputs are worked out by hand (``[redacted]`` put
by hand where the secret was); the pipeline is the one the services use."""

from __future__ import annotations

from reviewapp.services.secret_scan import redact_text

from .redaction_cases import R, keeps, redacts, redacts_where_stored

# --- 1. a password's name, "is" / "was", a value shaped like a password ----------------------
# Rule (``redaction._password_shaped``): 6+ characters with a letter and a digit or a
# symbol other than ``- _ . / ( )`` (hunter2, S3cret!, p@ssw0rd), or 6+ digits; a word of
# letters (wrong, reset, required ...), a short value and an algorithm's name stay.

test_a_password_after_is_or_was_is_redacted = redacts_where_stored([
    ("The password is hunter2", f"The password is {R}"),
    ("my password was hunter2", f"my password was {R}"),
    ("The password is hunter2.", f"The password is {R}."),
    ("the db password is: S3cret!, keep it", f"the db password is: {R}, keep it"),
    ("then the PASSWORD IS p@ssword now", f"then the PASSWORD IS {R} now"),
    ("the wifi passphrase was 12345678", f"the wifi passphrase was {R}"),
    ("pw is hunter2", f"pw is {R}"),
])

test_prose_after_password_is_stays = keeps([
    "the password is wrong", "the password was reset", "password is required",
    "The password is incorrect.", "the password was expired, invalid, empty, missing, changed or set",
    "the password is case-sensitive", "the password is 12 characters long", "the password is v2",
    "the password is SHA256 hashed", "the password is md5", "the password is ******",
    "the password is ${DB_PASSWORD}", "the password is n/a", "the bypass is on2024",
])

# --- 2. a password's name, a blank, a short value shaped like a password -------------------

test_a_short_password_after_its_name_and_a_blank_is_redacted = redacts_where_stored([
    ("passwd hunter2", f"passwd {R}"),
    ("password hunter2 worked", f"password {R} worked"),
    ("new passwd hunter2.", f"new passwd {R}."),
])

test_a_name_a_blank_and_no_password_stays = keeps([
    "passwd -l bob", "password v2", "password sha256", "pass test1 and test2", "token ab12cd",
    "password 2FA", "passwd bob",
])

# --- 3. pw: value -----------------------------------------------------------------------------
# "pw" names a password as "pwd" does: a word of its own, the same reading of a colon.

test_pw_colon_a_value_is_redacted = redacts_where_stored([
    ("pw: hunter2", f"pw: {R}"),
    ("user: bob, pw: hunter2, host: db1", f"user: bob, pw: {R}, host: db1"),
    ("pw=abc", f"pw={R}"),
    ("pw: letmein", f"pw: {R}"),
    ("DB_PW=hunter2", f"DB_PW={R}"),
    ('{"user": "bob", "pw": "x"}', f'{{"user": "bob", "pw": "{R}"}}'),
])

test_pw_colon_no_password_stays = keeps([
    "pw: n/a", "pw: wrong password", "pw: null", "npw: abc1", "kpw=hunter2", "password: n/a",
])

# --- 4. redis AUTH ----------------------------------------------------------------------------

test_a_redis_auth_password_is_redacted = redacts_where_stored([
    ("redis-cli -h cache AUTH abc123", f"redis-cli -h cache AUTH {R}"),
    ("redis-cli -h cache auth bob abc123", f"redis-cli -h cache auth bob {R}"),
    ("redis-cli AUTH abc123 && redis-cli ping", f"redis-cli AUTH {R} && redis-cli ping"),
    ("redis-cli AUTH 'bob' 'a b c'", f"redis-cli AUTH 'bob' '{R}'"),
    ("(redis-cli AUTH abc123)", f"(redis-cli AUTH {R})"),
    ("127.0.0.1:6379> AUTH abc123\nOK", f"127.0.0.1:6379> AUTH {R}\nOK"),
    ("cache:6379[2]> auth default abc123", f"cache:6379[2]> auth default {R}"),
])

test_auth_that_is_no_redis_password_stays = keeps([
    "auth failed for user bob", "> auth token expired", "OAuth abc123", "redis-cli ping; AUTH ok",
    "redis-cli AUTH", "redis-cli AUTH $REDIS_PASSWORD",
])

# --- 5. htpasswd -b: the last argument is the password --------------------------------------

test_an_htpasswd_batch_password_is_redacted = redacts_where_stored([
    ("htpasswd -b file bob hunter2", f"htpasswd -b file bob {R}"),
    ("htpasswd -cb /etc/nginx/.htpasswd bob hunter2 && nginx -s reload",
     f"htpasswd -cb /etc/nginx/.htpasswd bob {R} && nginx -s reload"),
    ("htpasswd -B -C 10 -b .htpasswd bob 'a b'", f"htpasswd -B -C 10 -b .htpasswd bob '{R}'"),
    ("htpasswd -nb bob hunter2", f"htpasswd -nb bob {R}"),
    ("htpasswd -nbB bob \"p@ss\" > out", f"htpasswd -nbB bob \"{R}\" > out"),
])

test_htpasswd_without_a_password_on_its_line_stays = keeps([
    "htpasswd -c /etc/nginx/.htpasswd bob", "htpasswd -B .htpasswd bob", "htpasswd -D .htpasswd bob",
    "htpasswd -n bob", "htpasswd -b file bob", "htpasswd -nb bob",
])

# --- 6. a password flag right after the command's name ---------------------------------------

test_a_password_flag_right_after_the_name_is_redacted = redacts_where_stored([
    ("mongosh -p s3cret9", f"mongosh -p {R}"),
    ("mongo -p s3cret9 --quiet", f"mongo -p {R} --quiet"),
    ("sqlcmd -P s3cret9 -S db", f"sqlcmd -P {R} -S db"),
    ("ldapsearch -w s3cret9 -b dc=x", f"ldapsearch -w {R} -b dc=x"),
])

test_a_port_right_after_the_name_stays = keeps(["mongosh -p 27017", "mongod -p 27017", "mongoose -p x1y2z3"])

# --- 7. a closing bracket after a bare value is no part of it --------------------------------
# A value holding no opening bracket ends before the closing brackets it ends in
# (``)``, ``]``, ``）``), as before a full stop; one that opens its own keeps them.

test_a_closing_bracket_after_a_value_stays = redacts_where_stored([
    ("(mysql -uroot -pS3cret!)", f"(mysql -uroot -p{R})"),
    ("(mysql -uroot -pS3cret!).", f"(mysql -uroot -p{R})."),
    ("(run mysql -uroot -pS3cret!), then", f"(run mysql -uroot -p{R}), then"),
    ("[mysql -pS3cret!]", f"[mysql -p{R}]"),
    ("（mysql -pS3cret!）", f"（mysql -p{R}）"),
    ("（密码是AB12CD）", f"（密码是{R}）"),
    ("(密码是AB12CD)。", f"(密码是{R})。"),
    ("(redis-cli -a hunter2)", f"(redis-cli -a {R})"),
    ("(password=hunter2)", f"(password={R})"),
])

test_a_bracket_the_value_opens_stays_in_it = redacts([
    ("mysql -pab(c)", f"mysql -p{R}"),
    ("mysql -p'S3cr)t'", f"mysql -p'{R}'"),
    ("mysql -pS3)cr", f"mysql -p{R}"),
])

# --- 8. "using password: YES / NO" ------------------------------------------------------------
# yes / no are booleans (YAML 1.1; MySQL's "using password: YES"), as true / false are.

test_a_boolean_after_a_password_name_stays = keeps([
    "Access denied for user 'bob'@'localhost' (using password: YES)",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)",
    "password: yes", "pwd: no",
])

# --- 9. pinned by mutation testing ------------------------------------------------------------

def test_the_mutants_of_pwd_messages_and_known_passwords_are_caught():
    """Two mutants of older code no test caught (tools/mutate.py): ``_pwd_message`` with
    ``<=`` for ``<`` read a word with no blank after it (";" follows at once) as the first
    word of a message, not a value; ``_known_password`` with 127 for 0x80 took DEL (0x7f)
    after the password for a letter going on (0x80 starts a UTF-8 sequence). This file
    imports ``services.secret_scan`` itself, so the mutation tool runs it."""
    assert redact_text("user: admin, pwd: qwzmrtkp; host: db1") == f"user: admin, pwd: {R}; host: db1"
    assert redact_text("password letmein\x7f") == f"password {R}\x7f"


# Pins of the new rules' edges (tools/mutate.py on this file's functions): the length
# bound of ``_password_shaped`` (6), a path, a full stop inside the closing bracket, and a
# character of several bytes before a closing bracket or a full stop.
test_the_edges_of_the_new_rules = redacts([
    ("the password is ab1c23", f"the password is {R}"),
    ("the password is ab1c2", "the password is ab1c2"),
    ("the password is /etc/pw1x2y", "the password is /etc/pw1x2y"),
    ("the password is ~/pw1x2y", "the password is ~/pw1x2y"),
    ('"(mysql -pS3cret!.)"', f'"(mysql -p{R}.)"'),
    ("(mysql -pab中)", f"(mysql -p{R})"),
    ("mysql -pab中. ok", f"mysql -p{R}. ok"),
])
