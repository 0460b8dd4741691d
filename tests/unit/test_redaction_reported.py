"""Leaks a new user reported in session 11 (SPEC 4), each sent as a run's query or a tool
result: a bare ``Bearer`` credential (no ``Authorization:`` in front), ``pwd: value``,
Chinese secret names (密码 / 密钥 / 口令 / 令牌), a CLI password flag followed by a blank
(``mysql -p hunter2``), and AWS secret access keys (named forms only: a bare 40-character
key is not redacted, see the last section). Each leak sits beside the ordinary text that
must stay as it is. Outputs are worked out by hand; runs the pipeline the services use
(``services.secret_scan``: the domain rules on RE2)."""

from __future__ import annotations

import pytest

from reviewapp.services.secret_scan import redact

from .redaction_cases import R, keeps, redacts_where_stored, stored_query_and_result

# --- 1. a bare Bearer credential ------------------------------------------------------------

test_a_bare_bearer_credential_is_redacted = redacts_where_stored([
    ("Bearer abc.def.ghi", f"Bearer {R}"),                 # three dotted parts, 11 characters
    ("Bearer abcdefghijkl", f"Bearer {R}"),                # 12 letters after the scheme's casing
    ("BEARER abcdefghijkl", f"BEARER {R}"),
    ("curl -H 'Bearer abc.def.ghi' https://api", f"curl -H 'Bearer {R}' https://api"),
    ("it sent Bearer abc.def.ghi.", f"it sent Bearer {R}."),  # the full stop ends the sentence
    ("bearer ab-cd_ef", f"bearer {R}"),                    # 8 characters, not only letters
    ("bearer ab-cd_e", "bearer ab-cd_e"),                  # 7: too short to tell
])


test_bearer_in_prose_stays = keeps([
    "the bearer of this letter",
    "uses Bearer authentication.",                        # a full stop is no part of a token
    "Bearer Authentication is configured; Bearer authorization, Bearer authorisation",
    "Bearer tokens are short-lived; bearer instruments; the standard bearer",
    "bearer abcdefghijkl",                                # lower case: a word (24 letters: a token)
    "Bearer Responsibilities",                            # a capitalised word: a title
    "Bearer e.g. a JWT; Bearer $TOKEN; Bearer <token>",
])


# --- 2. pwd: value -------------------------------------------------------------------------

test_pwd_colon_value_is_redacted = redacts_where_stored([
    ("pwd: hunter2", f"pwd: {R}"),
    ("PWD: hunter2", f"PWD: {R}"),
    ("user: admin, pwd: 123456", f"user: admin, pwd: {R}"),
    ("pwd: s3cr3t!", f"pwd: {R}"),
])


test_pwd_colon_path_or_message_stays = keeps([
    "pwd: /home/user",                    # the working directory
    "pwd: ~/src", "pwd: ./build", "pwd: ../up", "PWD: C:/Users/me", "PWD: C:\\Users\\me",
    "pwd: %2Fhome%2Fuser",
    "bash: pwd: command not found",       # the command's own messages: words, not values
    "pwd: too many arguments",
    "pwd: -x: invalid option",
    "pwd: usage: pwd [-LP]",
])


# --- 3. Chinese secret names ----------------------------------------------------------------

test_a_chinese_secret_name_before_a_value_is_redacted = redacts_where_stored([
    ("密码=hunter2", f"密码={R}"),
    ("密码：hunter2", f"密码：{R}"),                         # full-width colon
    ("密码: hunter2", f"密码: {R}"),
    ("数据库密码：123456，请妥善保管", f"数据库密码：{R}，请妥善保管"),
    ("密钥=Zq8Wx7Ec6Rv5", f"密钥={R}"),
    ("口令：letmein", f"口令：{R}"),
    ("访问令牌: abc.def.ghi", f"访问令牌: {R}"),
    ("密碼＝hunter2", f"密碼＝{R}"),                         # traditional, full-width equals
    ("私钥: Zq8Wx7Ec6Rv5", f"私钥: {R}"),
    ("秘钥=hunter2", f"秘钥={R}"),
    ('{"密码": "hunter2"}', f'{{"密码": "{R}"}}'),
])


def test_a_chinese_secret_named_json_key_hides_its_value():
    assert redact({"数据库密码": "hunter2", "令牌": 12345678, "密码提示": "pet"}) == {
        "数据库密码": R, "令牌": R, "密码提示": "pet"}


test_chinese_prose_about_secrets_stays = keeps([
    "请输入密码：",                        # "enter the password:" with nothing after it
    "密码：请联系管理员",                  # the value is Chinese prose
    "令牌桶算法: rate=10",                 # token bucket
    "密钥长度: 2048",                      # key length
    "密码错误: 3 次",                      # wrong password: 3 times
    "密码: null; 令牌=${TOKEN}",
    "公钥: ssh-ed25519",                   # a public key
])


# --- 4. a CLI password flag followed by a blank ---------------------------------------------

test_a_password_flag_followed_by_a_blank_is_redacted = redacts_where_stored([
    # mysql reads "-p VALUE" as "prompt, then the database VALUE"; a value with a letter and
    # a digit or a symbol is taken for a password anyway (an agent meant one).
    ("mysql -u root -p hunter2", f"mysql -u root -p {R}"),
    ("mysqladmin -u root -p hunter2 status", f"mysqladmin -u root -p {R} status"),
    ("mysqldump -u root -p 'p@ss!' shop > shop.sql", f"mysqldump -u root -p '{R}' shop > shop.sql"),
    ("mongosh -u admin -p hunter2 --authenticationDatabase admin",
     f"mongosh -u admin -p {R} --authenticationDatabase admin"),
    ("mongo -u admin -p letmein", f"mongo -u admin -p {R}"),
    ("mongodump -u admin -p letmein --db shop", f"mongodump -u admin -p {R} --db shop"),
    ("cqlsh -u cassandra -p cassandra db1", f"cqlsh -u cassandra -p {R} db1"),
    ("az login -u me@example.com -p hunter2", f"az login -u me@example.com -p {R}"),
    ("oc login -u dev -p hunter2 https://api.example.com:6443",
     f"oc login -u dev -p {R} https://api.example.com:6443"),
    ("sqlcmd -S db -U sa -P hunter2 -Q 'select 1'", f"sqlcmd -S db -U sa -P {R} -Q 'select 1'"),
    ("ipmitool -H 10.0.0.5 -U admin -P hunter2 power status",
     f"ipmitool -H 10.0.0.5 -U admin -P {R} power status"),
    ("ldapsearch -x -D cn=admin -w hunter2 -b dc=x", f"ldapsearch -x -D cn=admin -w {R} -b dc=x"),
])


test_a_p_flag_that_is_no_password_stays = keeps([
    "-p hunter2",                          # no command: -p is a port, parents, preserve ...
    "docker run -p 8080:80 nginx", "ssh -p 2222 ops@host", "scp -P 2222 f host:",
    "mkdir -p dir/sub", "cp -p a b", "grep -p x f", "psql -h db -p 5432 -U app",
    "mysql -u root -p shop",               # the database: mysql prompts for the password
    "mysql -u root -p", "mysql -u root -p -D shop", "mysqldump -u root -p shop_db > x.sql",
    "docker run --name mysql -p 3306:3306 mysql:8",
    "docker run --name mongo -p 27017:27017 mongo:6",
    "mosquitto_pub -h broker -p 1883 -t t -m hi",
    "ldapsearch -x -W -b dc=x",            # -W prompts
])


# --- 5. AWS secret access keys --------------------------------------------------------------

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example shape


@pytest.mark.parametrize(("text", "expected"), [
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {R}"),
    (f"[default]\naws_secret_access_key={AWS_SECRET}\n", f"[default]\naws_secret_access_key={R}\n"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", f"AWS_SECRET_ACCESS_KEY={R}"),
    (f'export AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', f'export AWS_SECRET_ACCESS_KEY="{R}"'),
    (f'"SecretAccessKey": "{AWS_SECRET}"', f'"SecretAccessKey": "{R}"'),
    (f'{{"Credentials": {{"SecretAccessKey": "{AWS_SECRET}"}}}}', None),
    (f"<SecretAccessKey>{AWS_SECRET}</SecretAccessKey>", f"<SecretAccessKey>{R}</SecretAccessKey>"),
    (f"SecretAccessKey: {AWS_SECRET}", f"SecretAccessKey: {R}"),
    (f"aws configure set aws_secret_access_key {AWS_SECRET}", f"aws configure set aws_secret_access_key {R}"),
    (f"--aws-secret-access-key {AWS_SECRET}", f"--aws-secret-access-key {R}"),
    (f'"secretAccessKey":"{AWS_SECRET}"', f'"secretAccessKey":"{R}"'),
])
def test_a_named_aws_secret_access_key_is_redacted(text, expected):
    query, result = stored_query_and_result(text)
    assert AWS_SECRET not in query and AWS_SECRET[:20] not in result and "EXAMPLEKEY" not in result
    if expected is not None:
        assert query == result == expected


# Decided, not redacted: with no name, an AWS secret access key is 40 characters of
# base64, like a git hash (40 hex), a SHA-1 in base64, an etag, a slice of any base64
# blob. A rule for the bare shape would redact those everywhere; a named key (above) and
# the key id beside it (``AKIA...``, a span rule) are redacted.
test_a_bare_40_character_run_without_a_name_stays = keeps([
    "9fceb02d0ae598e95dc970b74767f19372d61af8",          # a git commit: 40 hex
    "etag W2tvbmdxZW5nYmFvZ2FvL3JlcG9ydC0yMDI0LnBkZg",   # base64 of a path
    "sha1 2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
])
