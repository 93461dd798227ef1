"""The navigation guard on the wire: the browser rules the host computes for the tabs its threads
drive. They are declarativeNetRequest session rules in the API's own field names, so that the
extension installs them as they are and decides nothing (`extension/background/navigation-guard.js`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

RuleId = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
Priority = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
GuardTabId = Annotated[int, msgspec.Meta(ge=-1, le=2**31 - 1)]  # -1: requests from no tab
Domain = Annotated[str, msgspec.Meta(min_length=1, max_length=253)]
# Documents (a tab's or a frame's) and everything else a page may request: the blocked list and
# deny rules hold all of them, and so does a scope lock unless the user kept it to navigations.
ResourceType = Literal["main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object",
                       "xmlhttprequest", "ping", "csp_report", "media", "websocket", "webtransport",
                       "webbundle", "other"]
GuardAction = Literal["block", "allow"]

MAX_GUARD_RULES = 4000  # the browser keeps at most 5,000 session rules per extension


class GuardRule(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    """One session rule. The highest `priority` among the rules that match a request decides it;
    a rule without a URL condition matches every URL of its tabs."""

    id: RuleId
    priority: Priority
    action: GuardAction
    resource_types: Annotated[list[ResourceType], msgspec.Meta(min_length=1, max_length=15)]
    # Either the tabs the rule applies to, or every tab but these (new tabs the host has not seen).
    tab_ids: Annotated[list[GuardTabId], msgspec.Meta(min_length=1, max_length=10_000)] | None = None
    excluded_tab_ids: Annotated[list[GuardTabId], msgspec.Meta(max_length=10_000)] | None = None
    # Hosts, each with its subdomains; or a RE2 expression over the whole URL; or a URL filter.
    request_domains: Annotated[list[Domain], msgspec.Meta(min_length=1, max_length=1000)] | None = None
    regex_filter: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)] | None = None
    url_filter: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)] | None = None
    # Every host but these (with their subdomains): the hold on an agent's navigation to one site.
    excluded_request_domains: Annotated[list[Domain], msgspec.Meta(min_length=1, max_length=16)] | None = None
    # Only requests a document of these hosts (or their subdomains) started: for requests of no
    # tab, which a driven site's service worker makes.
    initiator_domains: Annotated[list[Domain], msgspec.Meta(min_length=1, max_length=1000)] | None = None
