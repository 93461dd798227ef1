// Tabwarden page executor, part 5: the operation overlay. A highlight box drawn over the element
// being acted on, inside a closed shadow root so page styles cannot reach it, fixed at the top
// of the stacking order and transparent to the pointer, gone after 700 ms. Its host is a plain
// element without attributes (`TW.ownHost`): a page sees an element come and go, never our name.
// The snapshot, the occlusion check and the effect observer all ignore it. It does not animate:
// while anything on a shown page animates, Chromium renders every frame and runs the page's next
// task (and the host's look after trusted input) only after it, so a fading box made the next
// action wait.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("overlay")) return;
  TW.parts.add("overlay");

  const SHOWN_MS = 700;
  let host = null;
  let box = null;
  let timer = null;

  function ensure() {
    if (host && host.isConnected) return;
    host = TW.ownHost();
    const shadow = host.attachShadow({ mode: "closed" });
    const style = document.createElement("style");
    // The host is styled from inside (no style attribute to read); important rules of a shadow
    // tree win over the page's own, important or not.
    style.textContent = `
      :host { all: initial !important; position: fixed !important; inset: 0 !important; z-index: 2147483647 !important;
              pointer-events: none !important; display: block !important; }
      .box { position: fixed; box-sizing: border-box; border: 2px solid #1a73e8; border-radius: 3px;
             background: rgba(26, 115, 232, 0.12); pointer-events: none; }`;
    box = document.createElement("div");
    box.className = "box";
    shadow.append(style, box);
    (document.documentElement || document.body).appendChild(host);
  }

  // Show the highlight at a top-level viewport rect ({x, y, width, height}).
  TW.highlight = (rect) => {
    try {
      ensure();
      clearTimeout(timer);
      Object.assign(box.style, { left: `${rect.x - 2}px`, top: `${rect.y - 2}px`, width: `${rect.width + 4}px`, height: `${rect.height + 4}px` });
      timer = setTimeout(() => {
        if (host) host.remove();
        host = null;
      }, SHOWN_MS);
    } catch (_) {
      // The overlay is a courtesy; a page that refuses it must not fail the action.
    }
  };
})();
