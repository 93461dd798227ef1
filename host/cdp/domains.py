"""The CDP domains `chrome.debugger` lets an extension use. cdp-use generates all 54 domains;
anything outside this list is refused before it is sent, with a clear error."""

from __future__ import annotations

from host.cdp.errors import CdpCode, CdpError

ALLOWED_DOMAINS = frozenset({
    "Accessibility", "Audits", "CacheStorage", "Console", "CSS", "Database", "Debugger", "DOM", "DOMDebugger",
    "DOMSnapshot", "Emulation", "Fetch", "IO", "Input", "Inspector", "Log", "Network", "Overlay", "Page",
    "Performance", "Profiler", "Runtime", "Storage", "Target", "Tracing", "WebAudio", "WebAuthn",
})

# DOM commands that only read; every other DOM.* command and every Input.* command changes the
# page and is never sent for a stale deep ref.
DOM_READS = frozenset({
    "DOM.describeNode", "DOM.resolveNode", "DOM.getBoxModel", "DOM.getContentQuads", "DOM.getDocument",
    "DOM.getFrameOwner", "DOM.getNodeForLocation", "DOM.requestNode", "DOM.pushNodesByBackendIdsToFrontend",
    "DOM.querySelector", "DOM.querySelectorAll", "DOM.getAttributes", "DOM.getOuterHTML", "DOM.enable", "DOM.disable",
})


def check_method(method: str) -> str:
    """The domain of `method` ("DOM" for "DOM.describeNode"); raises CdpError when the name is
    malformed or chrome.debugger does not allow its domain."""
    domain, dot, command = method.partition(".")
    if not dot or not domain.isalpha() or not command.isalpha():
        raise CdpError(CdpCode.DOMAIN_NOT_ALLOWED, f"{method!r} is not a CDP method name (Domain.command)")
    if domain not in ALLOWED_DOMAINS:
        raise CdpError(CdpCode.DOMAIN_NOT_ALLOWED,
                       f"chrome.debugger does not allow the {domain} domain, so {method} cannot be sent through the bridge")
    return domain


def is_page_write(method: str) -> bool:
    """True for commands that act on the page: Input.*, and DOM.* other than reads."""
    domain = method.partition(".")[0]
    return domain == "Input" or (domain == "DOM" and method not in DOM_READS)
