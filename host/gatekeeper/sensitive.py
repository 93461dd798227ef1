"""Built-in origin lists: *blocked* (no access: the agent neither reads nor changes anything there)
and *guarded* (asks before changes).

Users may add patterns to either list; built-ins cannot be removed. Blocked covers browser
internals, stores, payments, banks, brokers, government and every extension page (ours included:
the agent must never be able to press its own approval buttons). Guarded covers the places where
one write sends, shares or grants something on the user's behalf.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from host.gatekeeper.origins import Origin
from host.gatekeeper.patterns import OriginPattern, OriginSet, parse_origin_pattern

BUILTIN_BLOCKED: tuple[str, ...] = (
    # Browser internals, extension pages and extension stores.
    "chrome://*", "edge://*", "about:*", "brave://*", "opera://*", "vivaldi://*", "devtools://*",
    "chrome-untrusted://*", "chrome-search://*", "chrome-devtools://*",
    "chrome-extension://*", "moz-extension://*", "safari-web-extension://*", "extension://*",
    "*.chromewebstore.google.com", "chromewebstore.google.com", "microsoftedge.microsoft.com",
    "chrome.google.com",
    # Payments.
    "*.paypal.com", "*.stripe.com", "pay.google.com", "*.alipay.com", "pay.weixin.qq.com",
    "*.unionpay.com", "*.unionpayintl.com",
    # Banks.
    "*.icbc.com.cn", "*.ccb.com", "*.abchina.com", "*.boc.cn", "*.bankcomm.com", "*.cmbchina.com",
    "*.chase.com", "*.bankofamerica.com", "*.wellsfargo.com", "*.citibank.com", "*.hsbc.com",
    # Brokers.
    "*.fidelity.com", "*.schwab.com", "*.etrade.com", "*.futuhk.com", "*.tigerbrokers.com",
    # Government.
    "*.gov", "*.gov.cn", "*.gov.uk",
)

BUILTIN_GUARDED: tuple[str, ...] = (
    # Webmail.
    "mail.google.com", "outlook.live.com", "outlook.office.com", "outlook.office365.com",
    "mail.yahoo.com", "*.mail.yahoo.com", "mail.proton.me", "mail.qq.com", "wx.mail.qq.com",
    "mail.163.com", "mail.126.com", "*.fastmail.com", "mail.zoho.com",
    # Calendars.
    "calendar.google.com", "calendar.proton.me",
    # Cloud drives and document suites.
    "drive.google.com", "docs.google.com", "sheets.google.com", "slides.google.com",
    "*.dropbox.com", "onedrive.live.com", "*.sharepoint.com", "*.box.com", "*.icloud.com",
    "*.notion.so", "www.notion.com", "docs.qq.com", "*.feishu.cn", "*.larksuite.com",
    # Team messaging.
    "*.slack.com", "teams.microsoft.com", "teams.live.com", "discord.com", "web.whatsapp.com",
    "web.telegram.org", "*.dingtalk.com", "wx.qq.com", "web.wechat.com",
    # Cloud consoles.
    "console.aws.amazon.com", "*.console.aws.amazon.com", "portal.azure.com",
    "console.cloud.google.com", "*.console.aliyun.com", "console.cloud.tencent.com",
    "dash.cloudflare.com", "cloud.digitalocean.com", "vercel.com", "app.netlify.com",
    # Password managers.
    "vault.bitwarden.com", "vault.bitwarden.eu", "*.1password.com", "*.lastpass.com",
    "*.dashlane.com", "*.keepersecurity.com",
    # Identity providers' account pages.
    "accounts.google.com", "myaccount.google.com", "login.microsoftonline.com",
    "account.microsoft.com", "login.live.com", "account.live.com", "appleid.apple.com",
    "account.apple.com", "*.okta.com", "*.auth0.com", "id.atlassian.com", "login.yahoo.com",
)

_BLOCKED_PATTERNS = tuple(parse_origin_pattern(p) for p in BUILTIN_BLOCKED)
_GUARDED_PATTERNS = tuple(parse_origin_pattern(p) for p in BUILTIN_GUARDED)


class OriginLists:
    """The blocked and guarded lists in force: built-ins plus the user's (and admin's) additions."""

    __slots__ = ("blocked_extra", "guarded_extra", "_blocked", "_guarded", "digest")

    def __init__(self, blocked: Iterable[str] = (), guarded: Iterable[str] = ()) -> None:
        """Raises `PatternError` for a pattern that cannot be parsed."""
        extra_blocked = tuple(parse_origin_pattern(p) for p in blocked)
        extra_guarded = tuple(parse_origin_pattern(p) for p in guarded)
        self.blocked_extra: tuple[str, ...] = tuple(dict.fromkeys(p.text for p in extra_blocked))
        self.guarded_extra: tuple[str, ...] = tuple(dict.fromkeys(p.text for p in extra_guarded))
        self._blocked = OriginSet(_BLOCKED_PATTERNS + extra_blocked)
        self._guarded = OriginSet(_GUARDED_PATTERNS + extra_guarded)
        # Built-ins are part of the digest too: a new release that changes them changes the revision.
        payload = json.dumps([BUILTIN_BLOCKED, BUILTIN_GUARDED, self.blocked_extra, self.guarded_extra])
        self.digest = hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def blocked_patterns(self) -> tuple[OriginPattern, ...]:
        """Every blocked pattern in force (built-ins first)."""
        return self._blocked.patterns

    def blocked(self, origin: Origin) -> OriginPattern | None:
        """The blocked pattern matching `origin` (None for the empty origin or no match)."""
        return self._blocked.match(origin) if origin.text else None

    def guarded(self, origin: Origin) -> OriginPattern | None:
        """The guarded pattern matching `origin` (None for the empty origin or no match)."""
        return self._guarded.match(origin) if origin.text else None


DEFAULT_LISTS = OriginLists()
