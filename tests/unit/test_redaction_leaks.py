"""Shapes that still passed through in clear after session 11 (SPEC 4), each beside the
ordinary text that must stay as it is: a secret name before a ``Bearer`` credential
(``token: Bearer V``), Chinese "the password is V" (``密码是V`` / ``密码为V``), a bare
AWS secret access key beside its key id (``AKIA...``), and the variants of ``pwd: V`` and
``-p V`` that leaked. Outputs are worked out by hand; runs the pipeline the services use
(``services.secret_scan``: the domain rules on RE2)."""

from __future__ import annotations

import pytest

from reviewapp.services.secret_scan import redact_text, redact_texts

from .redaction_cases import R, keeps, redacts, redacts_where_stored

# --- 1. a secret name, then a Bearer credential ------------------------------------------

test_a_secret_name_before_a_bearer_credential_hides_the_credential = redacts_where_stored([
    ("token: Bearer xyz123abc", f"token: Bearer {R}"),
    ("Token: Bearer abcdefghij", f"Token: Bearer {R}"),        # 10 letters: too short bare
    ("auth: Bearer abcdefghij", f"auth: Bearer {R}"),          # a short secret word
    ("key: Bearer abc", f"key: Bearer {R}"),
    ("X-Auth-Token: Bearer abc", f"X-Auth-Token: Bearer {R}"),
    ("access_token=Bearer xyz", f"access_token=Bearer {R}"),
    ("api_key: bearer xyz123abc; next", f"api_key: bearer {R}; next"),
    ("secret:Bearer\tabc123 tail", f"secret:Bearer\t{R} tail"),
    ("token = BEARER a.b.c", f"token = BEARER {R}"),
])


test_other_bearer_values_after_a_name_stay_as_decided = redacts([
    ("token: Bearer", f"token: {R}"),                          # no credential: as before
    ("token: Bearerxyz123", f"token: {R}"),                    # one word: the value itself
    ('"token": "Bearer xyz123abc"', f'"token": "{R}"'),        # quoted: the whole value
    ("token_type=Bearer", "token_type=Bearer"),                # a type, not a secret name
])


# --- 2. Chinese "the password is ..." ------------------------------------------------------

test_a_chinese_secret_name_then_is_then_a_value_is_redacted = redacts_where_stored([
    ("密码是hunter2", f"密码是{R}"),
    ("密码为hunter2", f"密码为{R}"),
    ("密碼為hunter2", f"密碼為{R}"),                           # traditional
    ("数据库密码是 Zq8Wx7，请妥善保管", f"数据库密码是 {R}，请妥善保管"),
    ("密钥是abc.def.ghi", f"密钥是{R}"),
    ("私钥为Zq8Wx7Ec6Rv5", f"私钥为{R}"),
    ("口令是letmein", f"口令是{R}"),
    ("令牌为 xyz123", f"令牌为 {R}"),
    ("密码是：hunter2", f"密码是：{R}"),                        # the verb, then a colon
    ("密码是123456", f"密码是{R}"),                             # digits only: a PIN
    ("密码是'p@ss word'", f"密码是'{R}'"),
])


test_chinese_prose_with_is_stays = keeps([
    "密码是否正确？",                      # "is the password correct?": prose after 是
    "密码为空",                            # "the password is empty"
    "密码为 null",
    "密钥是AES加密的",                     # an algorithm's name: capitals (and digits) only
    "私钥为RSA格式；令牌是JWT；密码是MD5存储的；密钥为SHA256",
    "他是hunter2的作者",                   # 是 after no secret name
    "令牌桶是一种算法",                    # token bucket
])


# --- 3. a bare AWS secret access key beside its key id -------------------------------------

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example shape
SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"


test_a_bare_aws_secret_beside_its_key_id_is_redacted = redacts_where_stored([
    (f"{AWS_ID} {AWS_SECRET}", f"{R} {R}"),
    (f"{AWS_ID}:{AWS_SECRET}", f"{R}:{R}"),
    (f"Access key ID,Secret access key\n{AWS_ID},{AWS_SECRET}\n",
     f"Access key ID,Secret access key\n{R},{R}\n"),            # credentials.csv
    (f"ACCESSKEY\t{AWS_ID}\t2024-05-01T12:00:00+00:00\t{AWS_SECRET}\tActive\talice",
     f"ACCESSKEY\t{R}\t2024-05-01T12:00:00+00:00\t{R}\tActive\talice"),  # --output text
    (f"AWS Access Key ID [None]: {AWS_ID}\nAWS Secret Access Key [None]: {AWS_SECRET}\n",
     f"AWS Access Key ID [None]: {R}\nAWS Secret Access Key [None]: {R}\n"),  # aws configure
    (f"use {AWS_SECRET} with ASIAQ7F2LM9XZR4TY8WP", f"use {R} with {R}"),  # key before id
    (f'boto3.client("s3", "{AWS_ID}", "{AWS_SECRET}")', f'boto3.client("s3", "{R}", "{R}")'),
    (f"{AWS_ID} then commit {SHA}, key {AWS_SECRET}",
     f"{R} then commit {SHA}, key {R}"),                        # the git hash beside it stays
])


test_other_40_character_runs_near_a_key_id_stay = redacts([
    (AWS_SECRET, AWS_SECRET),                                   # alone: decided, not a secret
    (f"{AWS_ID} " + "x" * 300 + f" {AWS_SECRET}",
     f"{R} " + "x" * 300 + f" {AWS_SECRET}"),                   # 300 characters away: not near
    (f"{AWS_ID} {SHA}", f"{R} {SHA}"),                          # a git hash: 40 hex
    (f"{AWS_ID} {SHA.upper()}", f"{R} {SHA.upper()}"),
    (f"{AWS_ID} {AWS_SECRET}x", f"{R} {AWS_SECRET}x"),          # 41 characters: no such key
    (f"{AWS_ID} {AWS_SECRET[:-1]}", f"{R} {AWS_SECRET[:-1]}"),  # 39
    (f"{AWS_ID} {AWS_SECRET}=", f"{R} {AWS_SECRET}="),          # padded: a base64 value
    (f"{AWS_ID} ThisIsALongCamelCaseIdentifierNameHereXy",
     f"{R} ThisIsALongCamelCaseIdentifierNameHereXy"),          # letters only: an identifier
    (f"{AWS_ID} " + "A" * 40, f"{R} " + "A" * 40),
])


def test_a_key_id_in_another_text_of_the_document_does_not_make_a_secret():
    """"Nearby" is within one text: ``many`` joins a document's texts, and a key id in
    one of them says nothing about a 40-character run in the next."""
    assert redact_texts([AWS_ID, "ThisIsNoKeyButItIsFortyLong1234567890+/x", AWS_SECRET]) == [
        R, "ThisIsNoKeyButItIsFortyLong1234567890+/x", AWS_SECRET]


# --- 4. pwd: and -p variants ---------------------------------------------------------------

test_pwd_and_p_variants_that_leaked_are_redacted = redacts_where_stored([
    ("pwd: letmein", f"pwd: {R}"),                 # a word alone on its line: the value
    ("PWD: letmein", f"PWD: {R}"),
    ("pwd: letmein;", f"pwd: {R};"),
    ("user: root\npwd: letmein\nhost: db", f"user: root\npwd: {R}\nhost: db"),
    ("user=root, pwd: letmein, host=db", f"user=root, pwd: {R}, host=db"),
    ("pass: letmein", f"pass: {R}"),               # a well-known password
    ("PASS: changeme", f"PASS: {R}"),
    # mysql -p and a blank read the next word as the database, so a word stays a name ...
    # unless it is a well-known password, or a database follows it (mysql takes one).
    ("mysql -u root -p letmein", f"mysql -u root -p {R}"),
    ("mysql -uroot -p Password", f"mysql -uroot -p {R}"),
    ("mysql -u root -p letmein shop", f"mysql -u root -p {R} shop"),
    ("mariadb -u root -p opensesame -h db shop", f"mariadb -u root -p {R} -h db shop"),
    ("mysqldump -u root -p letmein shop > x.sql", f"mysqldump -u root -p {R} shop > x.sql"),
])


test_pwd_and_p_variants_that_are_ordinary_text_stay = keeps([
    "pwd: command not found", "bash: pwd: command not found",  # a message: words follow
    "pwd: too many arguments", "pwd: error retrieving current directory",
    "pwd: write error: Broken pipe", "pwd: usage: pwd [-LP]",
    "pwd: /home/user", "pwd:",
    "PASS: login", "PASS: test_login\nFAIL: test_logout",     # automake's test results
    "-p letmein",                                             # no command: port, parents ...
    "psql -h db -p letmein",                                  # psql -p is the port
    "mysql -u root -p shop", "mysql -u root -p shop < dump.sql",
    "mysql -u root -p shop -e 'select 1'",
    "mysqldump -u root -p shop orders > x.sql",               # mysqldump: database, tables
    "mysqladmin -u root -p flush-hosts status",               # mysqladmin: commands
])


test_the_variants_already_redacted_stay_redacted = redacts([
    ("PWD=letmein", f"PWD={R}"), ("pwd=letmein", f"pwd={R}"), ("export PWD=letmein", f"export PWD={R}"),
    ("mysql -u root -pletmein", f"mysql -u root -p{R}"), ("mysql --password letmein", f"mysql --password {R}"),
    ("mysql --password=letmein", f"mysql --password={R}"), ("sshpass -p letmein ssh h", f"sshpass -p {R} ssh h"),
    ("redis-cli -a letmein", f"redis-cli -a {R}"), ("db_pwd: letmein", f"db_pwd: {R}"),
    ('{"config": "pwd: letmein\\n"}', f'{{"config": "pwd: {R}\\n"}}'),  # a quoted name
])


# --- a run of glued key ids --------------------------------------------------------------

def test_key_ids_glued_into_one_run_are_each_redacted():
    """Key ids glued into one run of capitals and digits (no blank between): each is
    redacted. Before, each search inside the run read to its end to rule out image data
    (``_KEEP_PATTERN`` could start anywhere in a run), quadratic in the run: see the family
    "aws ids glued together" in test_redaction_linear.py."""
    assert redact_text("AKIAQ7F2LM9XZR4TY8WP" * 3 + "AKIA") == R * 3 + "AKIA"


# A run of base64 with a ``+`` or ``/`` and 255 more characters is image data, kept
# whole from where the run starts (after a character that is no base64, or at the start
# of the text), as before: a search inside a run that failed to be image data from its
# start cannot succeed from a later start (fewer characters follow the first ``+ /``).
test_image_data_is_kept_from_where_its_run_starts = redacts([
    ("img /" + "Q" * 300 + " end", "img /" + "Q" * 300 + " end"),            # a run after a blank
    ("/" + "Q" * 255 + "AKIAQ7F2LM9XZR4TY8WP", "/" + "Q" * 255 + "AKIAQ7F2LM9XZR4TY8WP"),  # text start
    ("AKIAQ7F2LM9XZR4TY8WPQ/" + "Q" * 300, "AKIAQ7F2LM9XZR4TY8WPQ/" + "Q" * 300),  # with its start
    ("a=Q/" + "Q" * 254 + " AIzaSyBc1D2e3F4g5H6i7J8k9L0m1N2o3P4q5R6",
     "a=Q/" + "Q" * 254 + f" {R}"),                                        # 254: no image
])


# --- 5. the punctuation after a secret stays -----------------------------------------------
# A user's report: a full stop after the password, and the closing backtick of a Markdown
# code span around a command, were redacted with it (an unclosed code span was left). A
# backtick ends a bare shell word (the shell reads it, as ``;&|<>()``); a full stop or a
# comma (also 。 ，) at the end of a value, before whitespace or the end of the text, ends
# the sentence, as after ``Bearer TOKEN`` (``_bearer``).

test_the_punctuation_after_a_secret_stays = redacts_where_stored([
    ("Rotated it: 密码是hunter2. AWS: next", f"Rotated it: 密码是{R}. AWS: next"),
    ("密码是hunter2.", f"密码是{R}."),
    ("密码为hunter2...", f"密码为{R}..."),
    ("数据库密码：hunter2. 然后", f"数据库密码：{R}. 然后"),
    ("ran `mysql -u root -p s3cret!`. Fix landed", f"ran `mysql -u root -p {R}`. Fix landed"),
    ("`mysql -u root -p s3cret!`", f"`mysql -u root -p {R}`"),
    ("mysql -u root -p s3cret!. Then", f"mysql -u root -p {R}. Then"),
    ("mysql -u root -p s3cret!, then", f"mysql -u root -p {R}, then"),
    ("mysql -u root -p s3cret!。", f"mysql -u root -p {R}。"),
    ("mysql -u root -p s3cret!。\n然后", f"mysql -u root -p {R}。\n然后"),
    ("mysql -u root -p s3cret!，", f"mysql -u root -p {R}，"),
    ("mysql -u root -p letmein.", f"mysql -u root -p {R}."),      # was left in clear
    ("sqlcmd -S db -P s3cret!`", f"sqlcmd -S db -P {R}`"),
    ("pwd: letmein.", f"pwd: {R}."),
    ("pass: letmein.\nnext", f"pass: {R}.\nnext"),
    ("token: Bearer abc.", f"token: Bearer {R}."),
    ("token: Bearer xyz123abc. Next", f"token: Bearer {R}. Next"),
])


@pytest.mark.parametrize(("text", "expected"), [
    ("mysql -u root -p s3.cr,et!", f"mysql -u root -p {R}"),      # inside the value: its own
    ("mysql -u root -p s3cret.x", f"mysql -u root -p {R}"),
    ("`mysql -p s3cret.`", f"`mysql -p {R}`"),                    # before the backtick: its own
    ("密码是hunter2.x", f"密码是{R}"),
    ("token: Bearer abc.def", f"token: Bearer {R}"),
])
def test_a_full_stop_inside_a_value_is_redacted_with_it(text, expected):
    assert redact_text(text) == expected
    assert "s3" not in redact_text(text) and "hunter" not in redact_text(text)


test_a_full_stop_after_a_name_that_is_no_secret_changes_nothing = keeps(
    ["mysql -u root -p shop.", "密码是AES.", "pwd: command not found."])


# --- 6. the older command-line rules: punctuation after, quotes around the password -------
# ``mysql -pPW`` (glued) and ``redis-cli -a PW`` / ``sshpass -p PW`` / ``docker login -p PW``
# swallowed the closing backtick of a code span and the full stop after the password (as
# the rules of section 5 did), and a quoted password (``-p's3cret'``, ``-a "s3 cret"``)
# did not match them at all: it was stored in clear.

test_the_older_flag_rules_keep_the_punctuation_after_the_password = redacts_where_stored([
    ("`mysql -uroot -ps3cret`.", f"`mysql -uroot -p{R}`."),
    ("ran `mysql -uroot -ps3cret` then", f"ran `mysql -uroot -p{R}` then"),
    ("mysql -uroot -ps3cret. Then", f"mysql -uroot -p{R}. Then"),
    ("mysql -uroot -ps3cret, then", f"mysql -uroot -p{R}, then"),
    ("mysqldump -uroot -ps3cret shop。", f"mysqldump -uroot -p{R} shop。"),
    ("mysql -uroot -ps3cret。\n然后", f"mysql -uroot -p{R}。\n然后"),
    ("`redis-cli -a s3cret`.", f"`redis-cli -a {R}`."),
    ("redis-cli -h cache -a s3cret. Then", f"redis-cli -h cache -a {R}. Then"),
    ("redis-cli -a s3cret, then ping", f"redis-cli -a {R}, then ping"),
    ("Use `sshpass -p s3cret`.", f"Use `sshpass -p {R}`."),
    ("`docker login -u me -p s3cret`.", f"`docker login -u me -p {R}`."),
    ("docker login -u me --password s3cret.", f"docker login -u me --password {R}."),
])


test_the_older_flag_rules_redact_a_quoted_password = redacts_where_stored([
    ("mysql -u root -p's3cret' shop", f"mysql -u root -p'{R}' shop"),
    ('mysql -u root -p"s3 cret" shop', f'mysql -u root -p"{R}" shop'),
    ("`mysql -uroot -p'P@ss;w0rd'`.", f"`mysql -uroot -p'{R}'`."),
    ("redis-cli -a 's3cret' ping", f"redis-cli -a '{R}' ping"),
    ('redis-cli -h cache -a "s3 cret" ping', f'redis-cli -h cache -a "{R}" ping'),
    ("sshpass -p 's3cret' ssh h", f"sshpass -p '{R}' ssh h"),
    ('docker login -u me -p "s3cret" registry.example', f'docker login -u me -p "{R}" registry.example'),
])


@pytest.mark.parametrize(("text", "expected"), [
    ("mysql -uroot -ps3.cr,et!", f"mysql -uroot -p{R}"),          # inside the value: its own
    ("`mysql -uroot -ps3cret.`", f"`mysql -uroot -p{R}`"),         # before the backtick: its own
    ("redis-cli -a s3cret.x ping", f"redis-cli -a {R} ping"),
])
def test_the_older_flag_rules_redact_a_full_stop_inside_the_password(text, expected):
    assert redact_text(text) == expected
    assert "s3" not in redact_text(text)


test_the_older_flag_rules_leave_variables_and_substitutions = keeps([
    'mysql -u root -p"$MYSQL_PASSWORD" shop', "mysql -uroot -p'${DB_PASS}' shop",
    'redis-cli -a "$REDIS_PASSWORD" ping', "sshpass -p \"$SSHPASS\" ssh h",
    "mysql -uroot -p`cat pw.txt` shop",                            # a command's output
])


# --- 7. the aws configure prompts ----------------------------------------------------------
# ``aws configure`` asks "AWS Secret Access Key [None]: " (or, when one is set, its last four
# characters after 16 stars) and echoes what is typed: the secret stood in clear unless a
# key id was near (section 3). A typed value is the secret whatever its shape (a MinIO
# or other S3-compatible one included); so is the key id typed after its prompt.

CONFIGURE = ("AWS Access Key ID [None]: {id}\nAWS Secret Access Key [None]: {secret}\n"
             "Default region name [None]: us-east-1\nDefault output format [None]: json\n")

test_the_aws_configure_prompts_hide_what_was_typed = redacts_where_stored([
    (f"AWS Secret Access Key [None]: {AWS_SECRET}", f"AWS Secret Access Key [None]: {R}"),
    (f"AWS Secret Access Key [****************EKEY]: {AWS_SECRET}",
     f"AWS Secret Access Key [****************EKEY]: {R}"),
    (f"AWS Secret Access Key [****************EKEY]: {AWS_SECRET}\r\nDefault region name [None]: ",
     f"AWS Secret Access Key [****************EKEY]: {R}\r\nDefault region name [None]: "),
    (f"$ aws configure --profile prod\naws secret access key [None]:  {AWS_SECRET}  \n",
     f"$ aws configure --profile prod\naws secret access key [None]:  {R}  \n"),
    ("AWS Secret Access Key [None]: minio-s3cret-Key", f"AWS Secret Access Key [None]: {R}"),
    ("AWS Access Key ID [None]: minioadmin\nAWS Secret Access Key [None]: minioadmin",
     f"AWS Access Key ID [None]: {R}\nAWS Secret Access Key [None]: {R}"),
    ("AWS Access Key ID [****************MPLE]: DO00QWERTYUIOPASDFGH",
     f"AWS Access Key ID [****************MPLE]: {R}"),
    (CONFIGURE.format(id="minioadmin", secret=AWS_SECRET), CONFIGURE.format(id=R, secret=R)),
    (f'"output": "AWS Secret Access Key [None]: {AWS_SECRET}\\nDefault region name [None]: "',
     f'"output": "AWS Secret Access Key [None]: {R}\\nDefault region name [None]: "'),
])


test_the_aws_configure_prompts_left_empty_and_the_others_stay = keeps([
    "AWS Secret Access Key [None]: ", "AWS Secret Access Key [None]:",
    "AWS Access Key ID [****************MPLE]: \nAWS Secret Access Key [****************EKEY]: \n"
    "Default region name [us-east-1]: eu-west-1\nDefault output format [json]: table\n",
    "Default region name [None]: us-east-1",
    "Put the AWS Secret Access Key [see below]: rotate it yearly",  # prose, not the prompt
    "AWS Secret Access Key [None]: $AWS_SECRET_ACCESS_KEY",
])


# --- 8. a password name, a blank, a well-known password ------------------------------------
# "password letmein": after a password's name and a blank (no ":" or "="), a word of letters
# is prose as often as a value ("password reset", "password policy"), so only the
# well-known passwords that are no English word are taken for one (``KNOWN_PASSWORDS``
# less password, passwd, secret, welcome, sunshine, princess, dragon): letmein, changeme,
# qwerty, iloveyou, toor, opensesame, trustno. Also after "is" / "was" ("the default
# password is changeme"). A value with a letter and a digit was redacted before.

test_a_well_known_password_after_a_password_name_is_redacted = redacts_where_stored([
    ("password letmein", f"password {R}"),
    ("Password CHANGEME", f"Password {R}"),
    ("the root password qwerty worked", f"the root password {R} worked"),
    ("db_password letmein", f"db_password {R}"),
    ("DB_PASSWORD\tletmein", f"DB_PASSWORD\t{R}"),
    ("The default password is changeme.", f"The default password is {R}."),
    ("the password was iloveyou, then", f"the password was {R}, then"),
    ("passphrase opensesame", f"passphrase {R}"),
    ("root pass toor", f"root pass {R}"),
    ("`password letmein`", f"`password {R}`"),
])


test_a_password_name_before_ordinary_words_stays = keeps([
    "password reset", "password policy", "password is required", "Password Reset Email",
    "the password changes every 90 days", "password welcome email", "password secret in vault",
    "password letmeinside", "password qwertyuiop_layout", "password is not changeme_later",
    "bypass letmein", "token qwerty", "keyboard layout: qwerty", "password is letme in",
    "password manager; the changeme script",
])


# --- 9. a quote left open after a password flag --------------------------------------------
# ``redis-cli -a 'abc123`` / ``mysql -p"s3cret``: the quote is never closed (a command cut
# short, a typo). The flag rules read a quoted value only up to its closing quote, and a
# bare one never starts at a quote, so the password was stored in clear. After an open
# quote the value runs to the next blank (as a bare one: a backtick, another quote, a
# backslash or the end of the line ends it too; a full stop or comma ending the sentence
# stays after it); a quote closed further on the same line still reads as before.

test_a_password_after_a_quote_left_open_is_redacted = redacts_where_stored([
    ("redis-cli -a 'abc123", f"redis-cli -a '{R}"),
    ('mysql -p"s3cret', f'mysql -p"{R}'),
    ("mysql -u root -p's3cret shop", f"mysql -u root -p'{R} shop"),
    ('mysqldump -uroot -p"s3cret shop > x.sql', f'mysqldump -uroot -p"{R} shop > x.sql'),
    ('redis-cli -h cache -a "s3cret ping', f'redis-cli -h cache -a "{R} ping'),
    ("sshpass -p 's3cret ssh h", f"sshpass -p '{R} ssh h"),
    ('docker login -u me -p "s3cret', f'docker login -u me -p "{R}'),
    ('docker login -u me --password "s3cret', f'docker login -u me --password "{R}'),
    ("mongosh -u admin -p 's3cret", f"mongosh -u admin -p '{R}"),
    ('sqlcmd -S db -U sa -P "s3cret -Q x', f'sqlcmd -S db -U sa -P "{R} -Q x'),
    ("ldapsearch -x -D cn=admin -w 's3cret", f"ldapsearch -x -D cn=admin -w '{R}"),
    ("mysql -u root -p 's3cret", f"mysql -u root -p '{R}"),       # a quote: a value, not a database
    ("ran `mysql -uroot -p's3cret` then", f"ran `mysql -uroot -p'{R}` then"),  # the backtick stays
    ("`redis-cli -a \"s3cret`.", f"`redis-cli -a \"{R}`."),
    ("mysql -uroot -p's3cret. Then", f"mysql -uroot -p'{R}. Then"),  # the full stop stays
    ("redis-cli -a 's3cret, then ping", f"redis-cli -a '{R}, then ping"),
    ("redis-cli -a 's3cret\necho 'done'", f"redis-cli -a '{R}\necho 'done'"),  # not closed below
    ("mongosh -u admin -p 's3cret. Then", f"mongosh -u admin -p '{R}. Then"),
    ("mongo -u admin -p '27017", f"mongo -u admin -p '{R}"),        # no port: it is quoted
    ("mysql -u root -p 'shop", f"mysql -u root -p '{R}"),          # nor a database
    ('{"cmd": "redis-cli -a \'s3cret"}', f'{{"cmd": "redis-cli -a \'{R}"}}'),  # JSON around it
])


test_a_quote_left_open_before_nothing_or_a_variable_stays = keeps([
    "redis-cli -a '", 'mysql -p"', "mysql -uroot -p' shop", 'sshpass -p " ssh h',
    "mysql -uroot -p'$MYSQL_PWD", 'redis-cli -a "${REDIS_PASSWORD}',
    "mongosh -p '$PW",
])


# --- 10. Chinese "is", then capitals and digits ----------------------------------------------
# After 是 / 为 ("is"), up to 6 capitals and digits were read as an algorithm's name
# (密钥是AES, 密码是MD5存储的) and kept, so 密码是AB12CD ("the password is AB12CD") was
# stored in clear. Now only names of algorithms, formats and schemes are kept (AES, SHA256,
# MD5, JWT, PEM, SM4 ...; also joined by "-" or "/" and with a key size: SHA-256,
# AES-256-GCM, AK/SK); any other value after "is" is one.

test_capitals_and_digits_after_a_chinese_is_are_redacted = redacts_where_stored([
    ("密码是AB12CD", f"密码是{R}"),
    ("密码为AB12CD", f"密码为{R}"),
    ("密碼為AB12CD", f"密碼為{R}"),
    ("口令是XYZ9", f"口令是{R}"),
    ("密钥是K9X2", f"密钥是{R}"),
    ("令牌为ABC123", f"令牌为{R}"),
    ("私钥为QWERTY", f"私钥为{R}"),                          # capitals alone
    ("新密码是 ZX81AB，请妥善保管", f"新密码是 {R}，请妥善保管"),
    ("密码是AB12CD。然后重启", f"密码是{R}。然后重启"),          # the full stop stays
    ("密码是AB12CD请妥善保管", f"密码是{R}请妥善保管"),          # prose glued after it
    ("密码是AES123", f"密码是{R}"),                            # a name's letters, no such algorithm
    ("密钥是SHA1234", f"密钥是{R}"),
    ("密码是MD5-ABC", f"密码是{R}"),                           # a name, then no size nor name
    ("密码是1A2B", f"密码是{R}"),
    ("密码是AES-12345", f"密码是{R}"),                         # no key size
    ("密码是N/A1", f"密码是{R}"),
])


test_names_of_algorithms_after_a_chinese_is_stay = keeps([
    "密钥是AES", "密钥是AES加密的", "密钥为AES256", "密钥为AES-256-GCM", "密钥是SHA-256",
    "私钥为RSA格式；令牌是JWT；密码是MD5存储的；密钥为SHA256",
    "私钥是ED25519格式的", "私钥为RSA2048", "密钥是SM4", "口令是OTP", "令牌是HS256签名的",
    "密钥是AK/SK", "密码是N/A", "私钥为PEM或DER格式", "密钥是PKCS8编码的", "密钥是SHA3-512",
    "密钥为RSA-2048的", "密码是NA", "密钥是AES/CBC/PKCS5", "私钥为RSA-4096",
])

# Every name of ``_ALGORITHM_NAMES``, written out here (a name dropped from the table, or
# misspelt, fails its case), and sizes after a "-" that are none (curves are written glued).
ALGORITHM_NAMES = """
    AES AES128 AES192 AES256 DES 3DES TDES SM1 SM2 SM3 SM4 RC2 RC4 RC5 RC6 CHACHA20 POLY1305
    ECB CBC CFB OFB CTR GCM CCM XTS RSA RSA1024 RSA2048 RSA3072 RSA4096 DSA ECDSA ECDH ECDHE
    DH EC ECC EDDSA ED25519 ED448 X25519 X448 MD4 MD5 SHA SHA1 SHA2 SHA3 SHA224 SHA256 SHA384
    SHA512 CRC32 HMAC BCRYPT SCRYPT ARGON2 PBKDF2 NTLM HS256 HS384 HS512 RS256 RS384 RS512
    ES256 ES384 ES512 PS256 JWT JWS JWE JWK JWKS PEM DER PKCS1 PKCS5 PKCS7 PKCS8 PKCS12 P12
    PFX JKS CER CRT CSR X509 ASN1 PPK BASE64 BASE32 HEX ASCII UTF8 JSON YAML XML OTP TOTP
    HOTP PIN MFA 2FA API OAUTH OAUTH2 OIDC SAML LDAP SSO SSH SSL TLS GPG PGP KMS HSM IAM STS
    RAM CAM CA AK SK UUID GUID N/A NA TBD""".split()

test_every_algorithm_name_after_a_chinese_is_stays = keeps([f"密钥是{name}" for name in ALGORITHM_NAMES])

test_sizes_after_a_name_are_key_and_digest_sizes = redacts([
    (f"密钥是SHA-{size}", f"密钥是SHA-{size}") for size in
    "1 2 3 5 128 160 192 224 256 384 448 512 1024 2048 3072 4096".split()] + [
    ("密钥是X-25519", f"密钥是{R}"), ("密钥是SHA-4", f"密钥是{R}"), ("密钥是AES-0256", f"密钥是{R}"),
])
