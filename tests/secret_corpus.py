"""Invented secrets of every shape SPEC 4 names, and ordinary text that must stay as it is.

Every value here is made up for the tests (no real credential). ``SECRETS`` holds
(name, text carrying the secret, fragments of the secret that must not survive);
``ORDINARY`` holds texts that redaction must leave unchanged. Shared by the unit,
service, page, API and export tests.
"""

from __future__ import annotations

import base64

A40 = "Q7f2Lm9XzR4tY8wP1kJ6nB3vC5hD0sG2aE7uW9qZ"  # 40 letters and digits
HEX64 = "9f" * 32
HEX32 = "4c" * 16
RVW = "rvw_Y5CqR8tLm2Xz9Wv4Kp7Nb3Hj6Gf1Ds0Aq-e_Ui8Oy5T"  # an ingest token's shape: rvw_ + 43

PEM_RSA = ("-----BEGIN RSA PRIVATE KEY-----\n"
           "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
           "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
           "-----END RSA PRIVATE KEY-----")
PEM_OPENSSH = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
               "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
               "QyNTUxOQAAACDk3Qm9XnEZVHCDsBpIQsB8EaBhH3mDNsfLkWQkAbCdRgAAAJgY2Lq1GNi6\n"
               "-----END OPENSSH PRIVATE KEY-----")
PEM_PKCS8_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
       "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PUTTY = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
         "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIDk3Qm9XnEZVHCDsBpIQsB8EaBhH3m\n"
         "Private-Lines: 1\nAAAAIHxKtLYX5CsL4zXdUzQ9w8RmZkp18gnTxKVTLw7onLRnr\n"
         "Private-MAC: 8c1c8f0e2a6d4b9e7f3a5c1d0b2e4f6a8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f")
B64_PEM = base64.b64encode(
    f"-----BEGIN PRIVATE KEY-----\n{PEM_PKCS8_BODY}\n-----END PRIVATE KEY-----\n".encode()
).decode()

# (name, text holding the secret, fragments of the secret that must not survive)
SECRETS: list[tuple[str, str, list[str]]] = [
    # Provider API keys
    ("openai legacy key", f"found sk-{A40}T3BlbkFJzz in the log", [A40[:20], "T3BlbkFJ"]),
    ("openai project key", "key sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s in use",
     ["Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s"]),
    ("openai service-account key", f"using sk-svcacct-{A40}_Zx", [A40[:24]]),
    ("openai admin key", f"admin: sk-admin-{A40}", [A40[8:30]]),
    ("anthropic key", "x-api-key: sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-Zx9Yw8Vu7Ts6Rq5-AA",
     ["Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA"]),
    ("openrouter key", f"OR sk-or-v1-{HEX64}", [HEX64[:30]]),
    ("aws access key id", "aws configure set aws_access_key_id AKIAQ7F2LM9XZR4TY8WP", ["Q7F2LM9XZR4TY8WP"]),
    ("aws temporary access key id", "AccessKeyId=ASIAQ7F2LM9XZR4TY8WP;", ["Q7F2LM9XZR4TY8WP"]),
    ("tencent secret id", "SecretId: AKIDq7f2Lm9XzR4tY8wP1kJ6nB3vC5hD0sG2", ["q7f2Lm9XzR4tY8wP1kJ6nB3v"]),
    ("github classic token", "git clone https://ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com/x/y",
     ["a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"]),
    ("github oauth token", "oauth gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", ["Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"]),
    ("github user-to-server token", "ghu_M1n2B3v4C5x6Z7l8K9j0H1g2F3d4S5a6P7o8 ok", ["M1n2B3v4C5x6Z7l8K9j0H1g2F3d4S5a6P7o8"]),
    ("github server-to-server token", "GITHUB_TOKEN ghs_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8", ["Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"]),
    ("github refresh token", "refresh: ghr_P0o9I8u7Y6t5R4e3W2q1A2s3D4f5G6h7J8k9", ["P0o9I8u7Y6t5R4e3W2q1A2s3D4f5G6h7J8k9"]),
    ("github token, prefix in capitals", "leaked GHP_c1D2e3F4g5H6i7J8k9L0m1N2o3P4q5R6s7T8 in CI",
     ["c1D2e3F4g5H6i7J8k9L0m1N2o3P4q5R6s7T8"]),
    ("github fine-grained token",
     "using github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
     ["11ABCDEFG0123456789_abcdefghijklmnop", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456"]),
    ("gitlab personal token", "GITLAB glpat-xY9zA8bC7dE6fG5hI4jK", ["xY9zA8bC7dE6fG5hI4jK"]),
    ("gitlab deploy token", "deploy gldt-Lm9XzR4tY8wP1kJ6nB3v", ["Lm9XzR4tY8wP1kJ6nB3v"]),
    ("gitlab runner registration token", "register GR1348941Zq8Wx7Ec6Rv5Tb4Yn3Um2", ["Zq8Wx7Ec6Rv5Tb4Yn3Um2"]),
    ("slack bot token", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     ["1234567890123-AbCdEfGh", "AbCdEfGhIjKlMnOpQrStUvWx"]),
    ("slack user token", "xoxp-223456789012-2234567890123-BbCdEfGhIjKlMnOpQrStUvWx", ["BbCdEfGhIjKlMnOpQrStUvWx"]),
    ("slack app token", "SLACK_APP xapp-1-A0123BCDEF4-5678901234567-abcdef0123456789abcdef", ["5678901234567-abcdef0123"]),
    ("slack webhook", "POST https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdEFGHijklMNOPqrstUVWX",
     ["T01ABCDEF/B02GHIJKL", "abcdEFGHijklMNOPqrstUVWX"]),
    ("google api key", "maps?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x", ["SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"]),
    ("google oauth token", "access ya29.a0AfH6SMBx3kL9mN2pQ4rS6tU8vW0xY2zA4bC6dE8fG", ["a0AfH6SMBx3kL9mN2pQ4rS6"]),
    ("google oauth client secret", "client GOCSPX-Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1", ["Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1"]),
    ("stripe live secret key (long)",
     "stripe sk_live_51HqLyjWDarjtT1zdp7dcXYZabcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789abcdefghijKLMN",
     ["51HqLyjWDarjtT1zdp7dcXYZ", "ABCDEFGHIJ0123456789abcdefghijKLMN"]),
    ("stripe test secret key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc9Zq8", ["4eC39HqLyjWDarjtT1zdp7dc"]),
    ("stripe restricted key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc4eC39HqLyjWDarjt", ["4eC39HqLyjWDarjtT1zdp7dc"]),
    ("stripe webhook secret", "whsec_Lm9XzR4tY8wP1kJ6nB3vC5hD0sG2aE7u", ["Lm9XzR4tY8wP1kJ6nB3vC5hD"]),
    ("sendgrid key", "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",
     ["ngeVfQFYQlKU0ufo8x5d1A", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc"]),
    ("hugging face token", "pull with hf_abcdefghijklmnopqrstuvwxyzABCDEF12 ok", ["abcdefghijklmnopqrstuvwxyzABCDEF12"]),
    ("npm token", "publish npm_Q7f2Lm9XzR4tY8wP1kJ6nB3vC5hD0sG2aE7u", ["Q7f2Lm9XzR4tY8wP1kJ6nB3vC5hD0sG2aE7u"]),
    ("pypi token", "twine pypi-AgEIcHlwaS5vcmcCJDk0YzM2YWQ0LTk4ZDAtNDc1ZS1hZWQ2LTA0ZjU5YzU0ZWI3ZgACKl",
     ["AgEIcHlwaS5vcmcCJDk0YzM2YWQ0LTk4ZDAtNDc1ZS1h"]),
    ("digitalocean token", f"doctl dop_v1_{HEX64}", [HEX64[:40]]),
    ("shopify access token", f"shpat_{HEX32} store", [HEX32]),
    ("shopify shared secret", f"secret shpss_{HEX32}", [HEX32]),
    ("twilio api key", "twilio key SK0123456789abcdef0123456789abcdef ok", ["0123456789abcdef0123456789abcdef"]),
    ("mailchimp key", "mc: 0123456789abcdef0123456789abcdef-us12", ["0123456789abcdef0123456789abcdef"]),
    ("telegram bot token", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ x", ["AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"]),
    ("discord bot token", "bot MTA4NjEyMzQ1Njc4OTAxMjM0.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123",
     ["MTA4NjEyMzQ1Njc4OTAxMjM0", "AbCdEfGhIjKlMnOpQrStUvWxYz0123"]),
    ("square secret", "sq0csp-Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7", ["Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1"]),
    ("artifactory token", f"X-JFrog-Art-Api AKCp8{A40}{A40[:30]}", [A40[:30]]),
    ("softlayer api key", f"https://api.softlayer.com/rest/v3/{'a1' * 32}/x", ["a1" * 32]),
    ("databricks token", f"dapi{HEX32}", [HEX32]),
    ("vault token", "VAULT hvs.CAESIJzq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8", ["CAESIJzq8Wx7Ec6Rv5Tb4Yn3Um2Ik1"]),
    ("postman key", f"PMAK-{'ab' * 12}-{'cd' * 17}", ["ab" * 12, "cd" * 17]),
    ("atlassian token", "ATATT3xFfGF0Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9=ABCD", ["xFfGF0Zq8Wx7Ec6Rv5Tb4Yn3"]),
    ("grafana service account token", f"glsa_{A40[:32]}_{'0a1b2c3d'}", [A40[:32]]),
    ("groq key", f"gsk_{A40}{A40[:12]}", [A40[:30]]),
    ("replicate token", f"r8_{A40[:37]}", [A40[:37]]),
    ("xai key", f"xai-{A40}{A40[:30]}", [A40[:30]]),
    ("perplexity key", f"pplx-{A40}{A40[:8]}", [A40[:30]]),
    ("linear key", f"lin_api_{A40}", [A40[:30]]),
    ("age secret key", "AGE-SECRET-KEY-1" + "QYZ7F2LM9XZR4TY8WP1KJ6NB3VC5HD0SG2AE7UW9QZQ7F2LM9XZR4TY8WP1K",
     ["QYZ7F2LM9XZR4TY8WP1KJ6NB3VC5HD"]),
    ("sentry token", f"sntrys_{A40}{A40[:10]}", [A40[:30]]),
    ("doppler token", f"dp.st.prd.{A40}{A40[:4]}", [A40[:30]]),
    ("figma token", f"figd_{A40}_x", [A40[:30]]),
    # Tokens and private keys
    ("jwt in prose", f"decoded {JWT} ok", ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]),
    ("jwt", f"session cookie {JWT} expired", ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJzdWIiOiIxMjM0NTY3ODkw"]),
    ("pem rsa private key", f"key file:\n{PEM_RSA}\nend", ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lg", "VTLw7onLRnrq0"]),
    ("pem openssh private key", PEM_OPENSSH,
     ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "QyNTUxOQAAACDk3Qm9XnEZVHCDsBpIQsB8EaBhH3mDNsfLkWQ"]),
    ("pem key cut before its END line", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CsL4zXdUz",
     ["MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CsL4zXdUz"]),
    ("pem key JSON-escaped",
     '{"type": "service_account", "key": "-----BEGIN PRIVATE KEY-----\\n' + PEM_PKCS8_BODY
     + '\\n-----END PRIVATE KEY-----\\n"}', [PEM_PKCS8_BODY[:40]]),
    ("putty private key", PUTTY, ["AAAAIHxKtLYX5CsL4zXdUzQ9w8RmZkp18gnTxKVTLw7onLRnr"]),
    ("base64-encoded pem in a yaml secret", f"data:\n  tls.pem: {B64_PEM}\nkind: Secret", [B64_PEM[20:60], B64_PEM[-40:]]),
    ("base64-encoded pem wrapped over lines",
     "ssh_key: |\n  " + "\n  ".join(B64_PEM[i:i + 64] for i in range(0, len(B64_PEM), 64)) + "\nnext: 1",
     [B64_PEM[64:100], B64_PEM[130:160]]),
    # Cloud credentials after their names
    ("aws secret access key (credentials file)", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYZQ7F2LM9XZ",
     ["wJalrXUtnFEMI/K7MDENG", "bPxRfiCYZQ7F2LM9XZ"]),
    ("aws SecretAccessKey in STS JSON", '{"AccessKeyId": "ASIAQ7F2LM9XZR4TY8WP", "SecretAccessKey": "kq9Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6"}',
     ["kq9Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6", "Q7F2LM9XZR4TY8WP"]),
    ("aws SessionToken in STS JSON", '{"SessionToken": "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6"}',
     ["IQoJb3JpZ2luX2VjEJr", "wEaCXVzLWVhc3QtMSJHMEUCIQD6"]),
    ("export AWS_SECRET_ACCESS_KEY", "export AWS_SECRET_ACCESS_KEY=Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6V",
     ["Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6V"]),
    ("export AWS_SESSION_TOKEN", "export AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDHVzZWFzdDE2",
     ["FwoGZXIvYXdzEJr", "wEaDHVzZWFzdDE2"]),
    ("aws secret key in STS XML", "<Credentials><SecretAccessKey>pq9Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6</SecretAccessKey>",
     ["pq9Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9Xa8Sc7Df6"]),
    ("azure storage connection string",
     "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Ab1+" * 22 + ";EndpointSuffix=core",
     ["Ab1+Ab1+Ab1+Ab1+"]),
    ("azure service bus shared access key",
     "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9=",
     ["Zq8Wx7Ec6Rv5Tb4Yn3Um2Ik1Ol0Pz9"]),
    ("azure sas signature", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=Zq8Wx7Ec6Rv5Tb4Yn3Um2%2BIk1Ol0%3D",
     ["Zq8Wx7Ec6Rv5Tb4Yn3Um2"]),
    ("s3 presigned signature",
     "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=" + "ab12" * 16 + "&x=1",
     ["ab12" * 8]),
    ("s3 presigned security token", "?X-Amz-Security-Token=IQoJb3JpZ2luX2VjELz%2F%2F%2F%2FwEaCXVz&X-Amz-Date=1",
     ["IQoJb3JpZ2luX2VjELz"]),
    ("gcs signed url signature", "https://storage.googleapis.com/b/o?X-Goog-Signature=" + "cd34" * 16,
     ["cd34" * 8]),
    ("gcp service account private key",
     '{"type": "service_account", "private_key_id": "k1", "private_key": "' + PEM_PKCS8_BODY + '"}',
     [PEM_PKCS8_BODY[:30]]),
    # Headers
    ("authorization bearer header", "Authorization: Bearer abc123.def456-ghi789_jklmno0pqr", ["abc123.def456-ghi789_jklmno0pqr"]),
    ("authorization header in JSON", '{"headers": {"Authorization": "Bearer Zq8Wx7Ec6Rv5Tb4Yn3Um2"}}', ["Zq8Wx7Ec6Rv5Tb4Yn3Um2"]),
    ("basic auth header", 'headers={"Authorization": "Basic dXNlcjpodW50ZXIyaHVudGVyMg=="}', ["dXNlcjpodW50ZXIyaHVudGVyMg"]),
    ("digest auth header", 'Authorization: Digest username="ops", response="6629fae49393a05397450978507c4ef1"',
     ["6629fae49393a05397450978507c4ef1"]),
    ("proxy authorization header", "Proxy-Authorization: Basic b3BzOnMzY3IzdFByMHh5", ["b3BzOnMzY3IzdFByMHh5"]),
    ("bare bearer token", "curl -H 'bearer 0123456789abcdefABCDEF0123' https://api", ["0123456789abcdefABCDEF0123"]),
    ("basic credentials in prose", "sent basic b3BzOmh1bnRlcjJodW50ZXI= to the proxy", ["b3BzOmh1bnRlcjJodW50ZXI"]),
    ("basic credentials with a short password", "sent basic dXNlcjpwdw== to the proxy", ["dXNlcjpwdw"]),
    # Base64 of a secret (a Kubernetes secret's data, a config blob), outside any header
    ("base64 of a github token", "data:\n  gh: Z2hwX0FiM2RFNWdIN2pLOW1OMXBRM3NUNXZYN3pBOWNFMWdJM2tNNQ==",
     ["Z2hwX0FiM2RFNWdIN2pLOW1OMXBRM3NUNXZYN3pBOWNFMWdJM2tNNQ"]),
    ("base64 of user:password", "creds dXNlcjpodW50ZXIyaHVudGVyMg== in the log", ["dXNlcjpodW50ZXIyaHVudGVyMg"]),
    ("cookie header", "Cookie: _ga=GA1.2.3; auth_state=Zq8Wx7Ec6Rv5Tb", ["Zq8Wx7Ec6Rv5Tb"]),
    ("session cookie pair", "Cookie: csrftoken=Zq8Wx7Ec6Rv5; sessionid=Tb4Yn3Um2Ik1Ol0P", ["Zq8Wx7Ec6Rv5", "Tb4Yn3Um2Ik1Ol0P"]),
    ("set-cookie header", "Set-Cookie: JSESSIONID=9F8E7D6C5B4A3921; Path=/; HttpOnly", ["9F8E7D6C5B4A3921"]),
    ("session id in a query", "GET /app?PHPSESSID=q8wx7ec6rv5tb4yn3um2 HTTP/1.1", ["q8wx7ec6rv5tb4yn3um2"]),
    # Passwords in URLs
    ("password in postgres url", "connect postgres://admin:S3cr3tPassw0rd@db.internal:5432/app", ["S3cr3tPassw0rd"]),
    ("password in redis url without user", "REDIS_URL=redis://:hunter2hunter2@cache:6379/0", ["hunter2hunter2"]),
    ("url password holding @ / #", "DATABASE_URL=postgres://app:p@ss/w#rd9@db.internal:5432/app", ["p@ss", "w#rd9"]),
    ("mongodb srv url", "mongodb+srv://svc:Mg0Pa55w0rdZ@cluster0.abcde.mongodb.net/db", ["Mg0Pa55w0rdZ"]),
    ("password in query string", "GET https://example.com/login?user=bob&password=Tr0ub4dor3x&next=/", ["Tr0ub4dor3x"]),
    ("token in query string", "https://api.example.com/v1/items?access_token=Zq8Wx7Ec6Rv5Tb4Yn3&page=2", ["Zq8Wx7Ec6Rv5Tb4Yn3"]),
    ("percent-encoded token after %3D", "redirect=https%3A%2F%2Fx.example%2Fcb%3Fstate%3D1%26token%3DZq8Wx7Ec6Rv5Tb4",
     ["Zq8Wx7Ec6Rv5Tb4"]),
    ("git credential url", "https://ci-bot:glpat-Zq8Wx7Ec6Rv5Tb4Yn3Um@gitlab.example.com/g/p.git", ["Zq8Wx7Ec6Rv5Tb4Yn3Um"]),
    # Assignments whose name ends in a secret word
    ("env DB_PASSWORD", "DB_HOST=db\nDB_PASSWORD=correct-horse-42\nDB_PORT=5432", ["correct-horse-42"]),
    ("env PGPASSWORD", "PGPASSWORD=pg_Zq8Wx7 psql -h db", ["pg_Zq8Wx7"]),
    ("env DJANGO_SECRET_KEY", "DJANGO_SECRET_KEY='dj-9x!k2@m4#p6$q8'", ["dj-9x!k2@m4#p6$q8"]),
    ("env MYSQL_ROOT_PASSWORD in compose", "environment:\n  - MYSQL_ROOT_PASSWORD=r00tPw9", ["r00tPw9"]),
    ("yaml password", "spring:\n  datasource:\n    password: y4mlS3cret\n    url: x", ["y4mlS3cret"]),
    ("yaml api_key", "provider:\n  api_key: yk_Zq8Wx7Ec6Rv5", ["yk_Zq8Wx7Ec6Rv5"]),
    ("secret= form", "secret=Zq8Wx7Ec6Rv5Tb4", ["Zq8Wx7Ec6Rv5Tb4"]),
    ("api_key: form", "api_key: Ak9Wx7Ec6Rv5Tb4", ["Ak9Wx7Ec6Rv5Tb4"]),
    ("token= form", "token=Tk9Wx7Ec6Rv5Tb4", ["Tk9Wx7Ec6Rv5Tb4"]),
    ("camelCase dbPassword in JSON text", '{"dbPassword": "cameL9Pw", "host": "db"}', ["cameL9Pw"]),
    ("sessionToken in JSON text", '{"sessionToken": "st-9Wx7Ec6Rv5"}', ["st-9Wx7Ec6Rv5"]),
    ("refresh_token in JSON text", '{"refresh_token": "rt.Zq8Wx7Ec6Rv5Tb4Yn3", "expires_in": 3600}', ["rt.Zq8Wx7Ec6Rv5Tb4Yn3"]),
    ("pwd key in JSON text", '{"user": "ops", "pwd": "pw0rd-77"}', ["pw0rd-77"]),
    ("pass key in JSON text", '{"user": "ops", "pass": "p4ss-88"}', ["p4ss-88"]),
    ("numeric password in JSON text", '{"password": 84736251}', ["84736251"]),
    ("client_secret in JSON text", '{"client_id": "app", "client_secret": "cs_Zq8Wx7Ec6Rv5"}', ["cs_Zq8Wx7Ec6Rv5"]),
    ("npmrc auth token", "//registry.npmjs.org/:_authToken=b7c5e1f0-0a3d-4c8e-9f21-6d7e8a9b0c1d",
     ["b7c5e1f0-0a3d-4c8e-9f21-6d7e8a9b0c1d"]),
    ("ado.net connection string", "Server=db;Database=app;User Id=sa;Password=Ad0N3tPw!;", ["Ad0N3tPw!"]),
    ("jdbc url password", "jdbc:mysql://db:3306/app?user=app&password=JdBcPw77&ssl=true", ["JdBcPw77"]),
    # Glued to the text before them
    ("key after a JSON-escaped newline", "line one\\nDB_PASSWORD=Gl9ed0Pw\\nDB_PORT=5432", ["Gl9ed0Pw"]),
    ("provider key after a letter", "idAKIAQ7F2LM9XZR4TY8WPend", ["Q7F2LM9XZR4TY8WP"]),
    ("provider key after a digit", "7ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R9", ["a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R9"]),
    ("provider key after an underscore", f"prefix_sk-proj-{A40}", [A40[:30]]),
    ("provider key after %3D", "q%3DAIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWX", ["SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWX"]),
    # Secret-named word, whitespace, value (AWS CLI, pasted notes); userinfo without a scheme
    ("aws configure set aws_secret_access_key",
     "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     ["wJalrXUtnFEMI/K7MDENG", "bPxRfiCYEXAMPLEKEY"]),
    ("AWS_SECRET_ACCESS_KEY space value", "AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
     ["wJalrXUtnFEMI/K7MDENG", "bPxRfiCYEXAMPLEKEZ"]),
    ("AWS_SECRET_ACCESS_KEY tab value", "AWS_SECRET_ACCESS_KEY\twJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     ["wJalrXUtnFEMI/K7MDENG", "bPxRfiCYEXAMPLEKEY"]),
    ("pwd: password", "login pwd: hunter2hunter2", ["hunter2hunter2"]),
    ("token space value", "token hunter2hunter3", ["hunter2hunter3"]),
    ("userinfo without a scheme", "user:hunter2hunter2@host", ["hunter2hunter2"]),
    # Command lines
    ("curl -u user:password", "curl -u deploy:Cu9lPw77 https://api.example.com", ["Cu9lPw77"]),
    ("curl --user", "curl --user 'ops:Cu9lPw88' https://x", ["Cu9lPw88"]),
    ("mysql -pPASSWORD", "mysql -h db -uroot -pMy5qlPw app < dump.sql", ["My5qlPw"]),
    ("--password=", "pg_dump --password=PgDuMp9 app", ["PgDuMp9"]),
    ("--password value", "tool login --password Fl4gPw99 --verbose", ["Fl4gPw99"]),
    ("--secret value without a digit", "tool login --secret OpenSesameNow", ["OpenSesameNow"]),
    ("--api-key value", "cli deploy --api-key Ak_Fl4g9Wx7", ["Ak_Fl4g9Wx7"]),
    ("sshpass -p", "sshpass -p Ss9hPw ssh ops@host", ["Ss9hPw"]),
    ("redis-cli -a", "redis-cli -h cache -a R3d1sPw ping", ["R3d1sPw"]),
    ("docker login -p", "docker login -u bot -p D0ck3rPw registry.example.com", ["D0ck3rPw"]),
    # A secret name and its value as two fields of one entry (Kubernetes / ECS env lists,
    # Postman headers, CloudFormation parameters), as a tool prints them
    ("kubernetes env entry in JSON text",
     '{"env": [{"name": "DB_PASSWORD", "value": "K8sEnvPw77"}, {"name": "PORT", "value": "5432"}]}',
     ["K8sEnvPw77"]),
    ("kubernetes env entry in YAML", "env:\n- name: STRIPE_API_KEY\n  value: YamlEnv9Wx7\n- name: PORT\n",
     ["YamlEnv9Wx7"]),
    ("postman header entry", '{"header": [{"key": "X-Api-Key", "value": "PmHdr9Wx7Ec6"}]}', ["PmHdr9Wx7Ec6"]),
    ("cloudformation parameter", '{"ParameterKey": "DbPassword", "ParameterValue": "CfnPw9Wx7"}', ["CfnPw9Wx7"]),
    # Session 11 (a new user's report): a bare Bearer credential, "pwd: value"
    ("bare bearer, dotted", "it sent Bearer bRr.tK9.qZx to the api", ["bRr.tK9.qZx"]),
    ("bare bearer, 12 letters", "retry with Bearer qwZmRtKpLxVb now", ["qwZmRtKpLxVb"]),
    ("pwd colon value", "host: db1, user: admin, pwd: Hu9ter2", ["Hu9ter2"]),
    ("mysql -p, a blank, a password", "mysql -h db -u root -p Hu9ter2x shop", ["Hu9ter2x"]),
    ("mongosh -p, a blank", "mongosh -u admin -p MgPw9xqz --authenticationDatabase admin", ["MgPw9xqz"]),
    ("sqlcmd -P", "sqlcmd -S db -U sa -P SqPw9xqz -Q 'select 1'", ["SqPw9xqz"]),
    # (base64 of it is no text to ``domain.base64_text``, which reads printable ASCII only:
    # NOT_ASCII_IN_BASE64 below)
    ("chinese password name", "数据库密码：Mm9Pw7xq，请妥善保管", ["Mm9Pw7xq"]),
    # Session 12: a secret name before a Bearer credential, "the password is", a bare AWS
    # secret access key beside its key id, "pwd:" before a word alone, mysql -p V DB.
    ("secret name before bearer", "api_token: Bearer qwZmRtKpLx now", ["qwZmRtKpLx"]),
    ("chinese token is", "令牌为Mm9Pw7xq", ["Mm9Pw7xq"]),
    ("aws secret beside its key id", "AKIAQ7F2LM9XZR4TY8WP Zq8Wx7Ec6Rv5Tb4Yn3Um2/Kp9Lm8Nb7Vc6Xz5As4",
     ["Zq8Wx7Ec6Rv5Tb4Yn3Um2", "Kp9Lm8Nb7Vc6Xz5As4"]),
    ("pwd colon, a word alone on its line", "user: admin\npwd: qwzmrtkp\nhost: db1", ["qwzmrtkp"]),
    ("mysql -p, a word, a database", "mysql -u root -p qwzmrtkp shop", ["qwzmrtkp"]),
    # Session 13: quoted passwords after the older flag rules; aws configure's prompts.
    ("mysql -p, glued and quoted", "mysql -u root -p'Qw9zmRtx' shop", ["Qw9zmRtx"]),
    ("redis-cli -a, quoted", 'redis-cli -h cache -a "R3d1sQpw" ping', ["R3d1sQpw"]),
    ("aws configure prompts", "AWS Access Key ID [None]: minioqwzm\n"
     "AWS Secret Access Key [****************As4x]: Zq8Wx7Ec6Rv5Tb4Yn3Um2/Kp9Lm8Nb7Vc6Xz5As4x",
     ["minioqwzm", "Zq8Wx7Ec6Rv5Tb4Yn3Um2", "Kp9Lm8Nb7Vc6Xz5As4x"]),
    ("password, a blank, a well-known password", "the root password opensesame worked", ["opensesame"]),
    # Session 16 (a new user's walk): "the password is/was V" and "passwd V" with a short
    # value, "pw: V", redis AUTH, htpasswd -b, mongosh -p right after the command name.
    ("the password is, a short password", "The password is hunter2", ["hunter2"]),
    ("my password was", "my password was Tr0ub4x", ["Tr0ub4x"]),
    ("pw colon value", "login as bob, pw: Pw9xqzm", ["Pw9xqzm"]),
    ("passwd, a blank, a short password", "passwd Hu9tr2x", ["Hu9tr2x"]),
    ("redis-cli AUTH", "redis-cli -h cache AUTH abc123", ["abc123"]),
    ("htpasswd -b", "htpasswd -b file bob Ht9pw2x", ["Ht9pw2x"]),
    ("mongosh -p right after the name", "mongosh -p s3cret9", ["s3cret9"]),
    # Session 16 (a new user's walk): the app's own ingest token (``rvw_`` and 43 characters
    # of URL-safe base64: ``secrets.token_urlsafe(32)``) in prose.
    ("reviewapp ingest token in prose", f"our reviewapp token is {RVW} ok", [RVW[4:], RVW[10:30]]),
    # Session 16: a password holding & ; , ' < (the value went on only to the first of them).
    # (Each part of the value is also a fragment of letters and digits: a page escapes the
    # characters themselves, ``&lt;``, so a fragment holding one is never found there.)
    ("password holding &", "password: Tr0ub4dor&3Qz", ["Tr0ub4dor", "&3Qz", "3Qz"]),
    ("password holding ;", "DB_PASSWORD=Qzc;def123", ["Qzc;", "Qzc", ";def123", "def123"]),
    ("password holding ,", "password: Qzb,cd1234", ["Qzb,", "Qzb", ",cd1234", "cd1234"]),
    ("password holding '", "password: Qzpass'w0rdQz1", ["Qzpass", "'w0rdQz1", "w0rdQz1"]),
    ("password holding < >", "password: Qzab<cd>123x", ["Qzab", "<cd>123x", "123x"]),
]

# Texts where a value ends at one of & ; , ' < before the next field (session 16): each
# with its exact redacted form, the fields after the value kept.
STRUCTURED_VALUES: list[tuple[str, str]] = [
    ("Server=x;Password=abc;Database=y", "Server=x;Password=[redacted];Database=y"),
    ("Server=db;Password=abc;User Id=sa;Initial Catalog=app",
     "Server=db;Password=[redacted];User Id=sa;Initial Catalog=app"),
    ("GET /login?password=abc&user=x&next=/", "GET /login?password=[redacted]&user=x&next=/"),
    ("<a href=\"/login?password=abc&amp;user=x\">", "<a href=\"/login?password=[redacted]&amp;user=x\">"),
    ("password: abc, user: bob", "password: [redacted], user: bob"),
    ("password=abc,user=x", "password=[redacted],user=x"),
    ("password=abc,user:x", "password=[redacted],user:x"),
    ("password: abc,", "password: [redacted],"),
    ("{password: abc}", "{password: [redacted]}"),
    ("echo 'PASSWORD=abc123' | x", "echo 'PASSWORD=[redacted]' | x"),
    ("password: 'ab;c' user=x", "password: '[redacted]' user=x"),
    ("<td>password: abc</td>", "<td>password: [redacted]</td>"),
    ("password=abc;token=Tk9Wx7Ec6Rv5", "password=[redacted];token=[redacted]"),
    ("monkey=a;b;token=Tk9Wx7Ec6Rv5", "monkey=a;b;token=[redacted]"),
    ("PGPASSWORD=secret&&psql -h db", "PGPASSWORD=[redacted]&&psql -h db"),
    ("DB_PASSWORD=abc; next", "DB_PASSWORD=[redacted]; next"),
    ("password: null, token: ''", "password: null, token: ''"),
]

# Shapes whose base64 is not decoded (``domain.base64_text`` reads base64 of printable
# ASCII only), so their base64 leaks: a known gap (session 11), pinned by the base64 tests.
NOT_ASCII_IN_BASE64 = frozenset(name for name, text, _ in SECRETS if not text.isascii())

# Ordinary text that must come out unchanged.
ORDINARY: list[str] = [
    "Request 3f2b8c1e-9a4d-4e7b-b6c2-1d5e8f9a0b3c failed; retry scheduled.",
    "The regression was fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday (a1b2c3d).",
    "Error: flight HAT030 not available on 2024-05-20",
    "Reservation ZFA04Y for user mia_li_3668 was cancelled; refund to gift_card_7219486.",
    "Order #A-20240520-7781 shipped; tracking 1Z999AA10123456784.",
    "pod recommendation-74fd485779-mlzfx is Pending on node 10.0.3.17:9100",
    "The basic plan covers one passenger; the secret of good support is patience.",
    "max_tokens=512, temperature=0.2, top_p=1, token_type=Bearer",
    "sha256:6f1ed002ab5595859014ebf0951522d9f1e46e3c0bb3c9a0c5e2a8f2b5a8c8f7",
    "content hash md5 d41d8cd98f00b204e9800998ecf8427e and sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709 match",
    "Price: $1,234.56 — 飞机票 ✈️ مرحبا",
    "PASS: 12 tests, FAIL: 0; Key: Value; monkey=banana; bypass=on",
    "PWD=/home/app OLDPWD=/tmp public_key=ssh-ed25519 next_token=eyJsYXN0IjoxMH0 sort_key=created_at",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "password: null, token: '', api_key: ${API_KEY}",
    "Bearer authentication is configured; basic authentication is off.",
    "def handler(signature, payload): return verify(signature)",
    "https://grafana.example.com:3000/d/abc?orgId=1&from=now-1h",
    "pwd: /home/user; the token bucket refills; a password manager; the secret 42 is out",
    "see a:b@c and ratio 3:4@10; mailto:ops-team@example.com; image app:v1.2.3-alpine@sha256:ab12",
    "Key: 2024 budget; api key rotation; pass 12 tests",
    '{"env": [{"name": "LOG_LEVEL", "value": "debug"}, {"name": "max_tokens", "value": "512"}]}',
    "env:\n- name: PUBLIC_KEY_PATH\n  value: /etc/keys/pub.pem",
    "mkdir -p dir; cp -p a b; psql -h db -p 5432; ssh -p 2222 h; mysql -u root -p shop; "
    "docker run --name mongo -p 27017:27017 mongo:6",
    "令牌桶算法: rate=10；密钥长度: 2048；请输入密码：；密码：请联系管理员；公钥: ssh-ed25519",
    "the bearer of this letter; uses Bearer authentication. pwd: /home/user; bash: pwd: command not found",
    "password reset; password policy; the password is required; password welcome email; bypass letmein",
    # Session 16: a password's name, "is" / "was", a word of prose or a placeholder.
    "the password is wrong; the password was reset; password is required; pw: n/a",
    "Password is incorrect, the password has expired, password is invalid, empty or missing; "
    "the password was changed; password is set; the password is md5 hashed; passwd -l bob",
    "ERROR 1045 (28000): Access denied for user 'bob'@'localhost' (using password: YES); "
    "Access denied for user 'ops'@'10.0.0.5' (using password: NO)",
    "htpasswd -c /etc/nginx/.htpasswd bob; htpasswd -D /etc/nginx/.htpasswd bob; the password was 12 characters",
]

# Base64 image data under a non-secret key: unchanged, byte for byte.
IMAGE_B64 = base64.b64encode(bytes(range(256)) * 40).decode()
