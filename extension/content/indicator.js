// Tabwarden page executor, the page indicator (injected after the overlay). While an agent
// turn drives this tab, a small pill in the bottom-right corner says so and offers Pause and
// Stop. It lives in a closed shadow root (page styles cannot reach it, page scripts cannot press
// its buttons), only its two buttons take the pointer (the rest lets clicks through to the
// page), and its own clicks never reach the page's listeners. The service worker shows and hides
// it (`indicator.show` / `indicator.hide`) and relays a trusted press of a button
// (`indicator.action`) to the host, which pauses or stops the turn. Its dot pulses twice when it
// appears, then stays still: while anything on a shown page animates, Chromium renders every
// frame and runs the page's next task only after one (the agent's every trusted input would wait
// for a frame, and the page would be redrawn for as long as the turn lasts).
//
// A press on it is taken at the window, in the capture phase, by the takeover watcher's listener
// (takeover-watch.js calls TW.indicatorEvent), not on the buttons: every event inside a shadow
// root passes the window first, where a page's capture listener could stop it before it got to
// the buttons. The watcher runs before any page script, so its listener comes first; it also
// stops our presses there, so the page's listeners never see them. Where the watcher came late
// (a document open before it was registered), a page's capture listener on window still can.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("indicator")) return;
  TW.parts.add("indicator");

  const CONTENT = globalThis.__tabwardenContent; // injected before every part
  const { TYPES } = CONTENT;
  const SWALLOWED = ["pointerdown", "pointerup", "mousedown", "mouseup", "click", "dblclick", "auxclick", "contextmenu",
    "keydown", "keyup", "keypress", "touchstart", "touchend"];
  const OWN_TYPES = new Set(SWALLOWED);
  let host = null;
  let shadow = null;
  const actions = new Map(); // our buttons -> their action

  function tell(action) {
    const message = CONTENT.message(TYPES.INDICATOR_ACTION, { action });
    try {
      chrome.runtime.sendMessage(message).catch(() => {});
    } catch (_) {
      // the extension was reloaded: nobody to tell
    }
  }

  // The button a click was on. From the window the event names only our host (the shadow root is
  // closed), so a pointer's click is placed by a hit test inside our own root, and a click made
  // with a key (detail 0, no position) is the focused button's.
  function pressedButton(event) {
    const focused = shadow.activeElement;
    if (event.detail === 0 && actions.has(focused)) return focused;
    const hit = shadow.elementFromPoint(event.clientX, event.clientY);
    return actions.has(hit) ? hit : null;
  }

  // A press on the indicator, heard at the window before the page's listeners (takeover-watch.js).
  // A trusted click on a button is the user's; a page script's synthetic one is not. Answers
  // whether the event was ours and taken, to stop there; a click not placed on a button goes on
  // to the buttons' own listeners.
  TW.indicatorEvent = (event) => {
    if (!host || event.target !== host || !event.isTrusted || !OWN_TYPES.has(event.type)) return false;
    if (event.type !== "click") return true;
    const pressed = pressedButton(event);
    if (!pressed) return false;
    tell(actions.get(pressed));
    return true;
  };

  function button(label, action) {
    const node = document.createElement("button");
    node.type = "button";
    node.dataset.label = label;
    node.className = action;
    node.setAttribute("aria-label", `${label} the Tabwarden task`);
    actions.set(node, action);
    // Reached only by a click nothing took at the window (see TW.indicatorEvent).
    node.addEventListener("click", (event) => {
      if (event.isTrusted) tell(action);
    });
    return node;
  }

  function build() {
    // A plain element without attributes, styled from inside its closed shadow root: nothing a
    // page can read names us (see TW.ownHost).
    const element = TW.ownHost();
    shadow = element.attachShadow({ mode: "closed" });
    actions.clear();
    const style = document.createElement("style");
    style.textContent = `
      :host { all: initial !important; position: fixed !important; right: 12px !important; bottom: 12px !important;
              z-index: 2147483647 !important; display: block !important; pointer-events: none !important; }
      .pill { display: flex; align-items: center; gap: 6px; padding: 4px 4px 4px 10px; border-radius: 16px;
              background: rgba(32, 33, 36, 0.92); color: #fff; font: 500 12px/16px system-ui, sans-serif;
              box-shadow: 0 2px 8px rgba(0, 0, 0, 0.3); pointer-events: none; user-select: none; }
      .dot { width: 8px; height: 8px; border-radius: 50%; background: #34a853;
             animation: pulse 1.4s ease-in-out 2; }
      @keyframes pulse { 50% { opacity: 0.35; } }
      button { all: unset; pointer-events: auto; cursor: pointer; box-sizing: border-box; width: 52px;
               padding: 3px 0; border-radius: 12px; text-align: center; background: rgba(255, 255, 255, 0.16); }
      button:hover { background: rgba(255, 255, 255, 0.28); }
      button:focus-visible { outline: 2px solid #8ab4f8; }
      button.stop { background: #d93025; }
      button.stop:hover { background: #ea4335; }
      .label::before { content: "Tabwarden is operating"; }
      button::before { content: attr(data-label); }`;
    const pill = document.createElement("div");
    pill.className = "pill";
    pill.setAttribute("role", "status");
    const dot = document.createElement("span");
    dot.className = "dot";
    // Its words are drawn by the style, not held as text: the page's own find (window.find)
    // searches the text inside closed shadow roots too, and would find our name.
    const label = document.createElement("span");
    label.className = "label";
    pill.append(dot, label, button("Pause", "pause"), button("Stop", "stop"));
    shadow.append(style, pill);
    // Should one of our presses get past the window, it ends here: the page's bubbling listeners
    // never see it.
    for (const type of SWALLOWED) shadow.addEventListener(type, (event) => event.stopPropagation());
    return element;
  }

  function show() {
    if (host && host.isConnected) return;
    host = build();
    (document.documentElement || document.body).appendChild(host);
  }

  function hide() {
    if (host) host.remove();
    host = null;
    shadow = null;
    actions.clear();
  }

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    const type = CONTENT.typeOf(message);
    if (type !== TYPES.INDICATOR_SHOW && type !== TYPES.INDICATOR_HIDE) return false;
    const problem = CONTENT.problem(message);
    if (problem) {
      sendResponse({ ok: false, error: problem });
      return false;
    }
    if (type === TYPES.INDICATOR_SHOW) show();
    else hide();
    sendResponse({ ok: true, shown: !!host });
    return false;
  });
})();
