// Tabwarden page executor, part 11: manual takeover. A trusted mouse press or key press in a page
// the agent is driving means a person is using it; the service worker passes that to the host,
// which pauses the threads driving this tab. Our own synthetic events are never trusted; the
// worker filters the debugger's trusted input itself.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("takeover")) return;
  TW.parts.add("takeover");

  const REPORT_GAP_MS = 1000;
  let lastReport = 0;

  function report(event) {
    if (!event.isTrusted || TW.isOverlayNode(event.target)) return; // our own indicator is not the page
    const now = Date.now();
    if (now - lastReport < REPORT_GAP_MS) return;
    lastReport = now;
    try {
      chrome.runtime.sendMessage({
        type: "tabwarden.manualInput",
        kind: event.type,
        url: location.href.slice(0, 2000),
        duringAgentRequest: TW.state.activeRequests > 0,
      }).catch(() => {});
    } catch (_) {
      // the extension was reloaded: nobody to tell
    }
  }

  window.addEventListener("mousedown", report, { capture: true, passive: true });
  window.addEventListener("keydown", report, { capture: true, passive: true });
  // A frame (re)loaded: its new document needs the watcher. Load does not bubble and never reaches
  // the window, but the document sees it while capturing.
  document.addEventListener("load", (event) => {
    const tag = event.target && event.target.tagName;
    if (tag !== "IFRAME" && tag !== "FRAME") return;
    try {
      chrome.runtime.sendMessage({ type: "tabwarden.frameLoaded" }).catch(() => {});
    } catch (_) {
      // the extension was reloaded
    }
  }, { capture: true, passive: true });
})();
