// The isolated world's half of the ElementInternals link (see internals-observer.js, in the
// page's MAIN world): made at document_start, before any page script, by sending the observer a
// random name. `globalThis.__tabwardenInternals.ask(el)` then returns what the element's internals
// hold ({role, "aria-checked", labels, ...}) or null. Only elements the observer can be told
// apart from their host are asked: in the document or an open shadow root (an event from inside
// a closed one reaches the main world with the host as its target).
(() => {
  if (globalThis.__tabwardenInternals) return;
  const HELLO = "tabwarden-internals-hello";
  const READY = "tabwarden-internals-ready";
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const name = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  let linked = false;
  let answer = "";
  // The observer may already be waiting (it ran first), or arrive after us and say it is ready.
  // Once it acknowledged the name (under the name itself), nothing makes us say it again.
  const onReady = (event) => {
    event.stopImmediatePropagation();
    document.dispatchEvent(new CustomEvent(HELLO, { detail: name }));
  };
  document.addEventListener(`${name}-a`, (event) => {
    event.stopImmediatePropagation();
    const detail = typeof event.detail === "string" ? event.detail : "";
    if (linked) answer = detail;
    else if (detail === "linked") {
      linked = true;
      document.removeEventListener(READY, onReady, true);
    }
  }, true);
  document.addEventListener(READY, onReady, true);
  document.dispatchEvent(new CustomEvent(HELLO, { detail: name }));

  const askable = (el) => {
    if (!el || !el.localName || !el.localName.includes("-")) return false; // only custom elements have internals
    const root = el.getRootNode();
    return root === el.ownerDocument || (root instanceof ShadowRoot && root.mode === "open");
  };

  globalThis.__tabwardenInternals = {
    ask(el) {
      if (!linked || !askable(el)) return null;
      answer = "";
      el.dispatchEvent(new CustomEvent(name, { composed: true }));
      if (!answer) return null;
      try {
        return JSON.parse(answer);
      } catch (_) {
        return null;
      }
    },
  };
})();
