"""The secret-detection library behind redaction: detect-secrets (Yelp), as detectors for
``domain.redaction`` (SPEC 4).

Why both a library and our own span patterns (evaluated on detect-secrets 1.5):

* detect-secrets is a *scanner*: a plugin reports the secret **values** it saw in a line,
  not their spans, and for several shapes the value is only part of the secret, which
  would leave the rest visible if we replaced just that: ``PrivateKeyDetector`` reports
  the words ``BEGIN RSA PRIVATE KEY`` (not the key body), ``StripeDetector`` the first 24
  characters of a key of any length, ``JwtTokenDetector``'s lazy pattern stops before the
  signature, ``OpenAIDetector`` knows only legacy ``...T3BlbkFJ...`` keys (not ``sk-proj-``
  or Anthropic ``sk-ant-``), and there is no Google API key, bearer-token or AWS secret
  key (outside quoted code) plugin.
* Its high-entropy plugins are tuned for source code and flag UUIDs and git hashes,
  which reviewers need to read; they are not used. Nor is the public-IP plugin (an IP is
  diagnostic evidence, not a secret) or the keyword plugin (its code-oriented patterns
  add nothing over the keyed patterns in ``domain.redaction``).

So ``domain.redaction`` redacts whole spans first, and the remaining regex plugins of
detect-secrets (Artifactory, Azure storage, Cloudant, Discord, IBM, Mailchimp, npm,
PyPI, SendGrid, SoftLayer, Square, Telegram, Twilio, plus its own AWS / GitHub / GitLab /
Slack / Stripe / JWT / basic-auth / private-key patterns as a second net) run on what is
left, replacing every value they still find.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from ..domain import redaction
from ..domain.redaction import Detector

_PLUGINS: tuple[RegexBasedDetector, ...] = tuple(
    cls()
    for cls in (
        ArtifactoryDetector, AWSKeyDetector, AzureStorageKeyDetector, BasicAuthDetector,
        CloudantDetector, DiscordBotTokenDetector, GitHubTokenDetector, GitLabTokenDetector,
        IbmCloudIamDetector, IbmCosHmacDetector, JwtTokenDetector, MailchimpDetector,
        NpmDetector, OpenAIDetector, PrivateKeyDetector, PypiTokenDetector, SendGridDetector,
        SlackDetector, SoftlayerDetector, SquareOAuthDetector, StripeDetector,
        TelegramBotTokenDetector, TwilioKeyDetector,
    )
)


# When to run a plugin. Most plugins look for a secret that is a run of at least 20
# token characters, so they run only when the text holds such a run (one cheap scan);
# Artifactory keys can be 11 characters long; the others, whose secret can be short, run
# when their marker word is present.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=]{20}")
_MEDIUM_TOKEN = re.compile(r"A[KP][A-Za-z0-9]{9}")
_WORD_GATES: dict[type, tuple[str, ...]] = {
    BasicAuthDetector: ("://",),
    NpmDetector: ("_authtoken",),
    PrivateKeyDetector: ("private key", "putty-user-key"),
    SlackDetector: ("xox", "hooks.slack"),
}
_TOKEN_PLUGINS = tuple(p for p in _PLUGINS
                       if type(p) not in _WORD_GATES and not isinstance(p, ArtifactoryDetector))
_ARTIFACTORY = tuple(p for p in _PLUGINS if isinstance(p, ArtifactoryDetector))
_WORD_PLUGINS = tuple((p, _WORD_GATES[type(p)]) for p in _PLUGINS if type(p) in _WORD_GATES)


def _detect(text: str) -> Iterable[str]:
    found: list[str] = []
    if _LONG_TOKEN.search(text) is not None:
        for plugin in _TOKEN_PLUGINS:
            found.extend(plugin.analyze_string(text))
    if _MEDIUM_TOKEN.search(text) is not None:
        for plugin in _ARTIFACTORY:
            found.extend(plugin.analyze_string(text))
    lowered = text.lower()
    for plugin, words in _WORD_PLUGINS:
        if any(word in lowered for word in words):
            found.extend(plugin.analyze_string(text))
    return found


DETECTORS: tuple[Detector, ...] = (_detect,)


def redact(value: Any) -> Any:
    """``domain.redaction.redact`` with the detect-secrets detectors."""
    return redaction.redact(value, DETECTORS)


def summarize(value: Any, limit: int = redaction.SUMMARY_LIMIT) -> str | None:
    """``domain.redaction.summarize`` (redact, serialise, cut) with the detectors."""
    return redaction.summarize(value, limit, DETECTORS)
