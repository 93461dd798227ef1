// Tabwarden page executor, part 2b: accessible names and descriptions, computed by the rules of
// the W3C accessible name computation: hidden content left out unless referenced, then
// aria-labelledby, the value of a control embedded in another's label, aria-label, the host
// language's labels (label elements for labelable elements only, alt, legend, caption, SVG
// title), the content for roles named by it, and the title as a last resort.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("accessible-name")) return;
  TW.parts.add("accessible-name");

  // Text gathered past this is cut anyway (names are shown up to 80 characters).
  const GATHER_LIMIT = 400;
  const LABELABLE = new Set(["input", "select", "textarea", "button", "meter", "output", "progress"]);
  const BUTTON_INPUTS = { submit: "Submit", reset: "Reset", image: "Submit" };
  const SKIPPED = new Set(["script", "style", "noscript", "template", "title", "desc"]);

  function hiddenForNames(el) {
    if (TW.ariaOf(el, "aria-hidden") === "true" || el.hasAttribute("hidden")) return true;
    // An area is never rendered itself (its image shows it): its display says nothing.
    if (el.localName === "area") return false;
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden" || style.visibility === "collapse";
  }

  function byId(el, id) {
    const root = el.getRootNode();
    return root.getElementById ? root.getElementById(id) : root.querySelector(`#${CSS.escape(id)}`);
  }

  function referenced(el, attr) {
    const out = [];
    for (const id of (el.getAttribute(attr) || "").split(/\s+/)) {
      const target = id && byId(el, id);
      if (target) out.push(target);
    }
    return out;
  }

  function selectedText(select) {
    return [...select.selectedOptions].map((option) => TW.collapse(option.label || option.textContent)).join(" ");
  }

  // The value an embedded control gives the label it sits in.
  function embeddedValue(el, role) {
    const tag = el.localName;
    if (role === "textbox" || role === "searchbox") {
      return tag === "input" || tag === "textarea" ? el.value : el.textContent;
    }
    if (role === "combobox" || role === "listbox") {
      if (tag === "select") return selectedText(el);
      if (tag === "input") return el.value;
      const chosen = el.querySelectorAll("[role=option][aria-selected=true]");
      return [...chosen].map((option) => TW.collapse(option.textContent)).join(" ");
    }
    if (TW.roles.range.has(role)) {
      return TW.ariaOf(el, "aria-valuetext") || TW.ariaOf(el, "aria-valuenow") || (tag === "input" ? el.value : "");
    }
    return null;
  }

  // CSS generated content counts unless it is hidden (a bold copy of a tab's text kept only to
  // reserve its width, say).
  function pseudo(el, which) {
    const style = el.ownerDocument.defaultView.getComputedStyle(el, which);
    const content = style.content;
    if (!content || content === "none" || content === "normal") return "";
    if (style.visibility === "hidden" || style.visibility === "collapse" || style.display === "none") return "";
    const match = /^"(.*)"$/.exec(content);
    return match ? match[1] : "";
  }

  function childNodes(el) {
    if (el.localName === "slot") {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return (el.shadowRoot || el).childNodes;
  }

  // Text as it is rendered, and as Chromium names an element from it: in the case its
  // element's text-transform gives (a tab written "Account" and styled uppercase is "ACCOUNT").
  function inCase(text, transform) {
    if (transform === "uppercase") return text.toUpperCase();
    if (transform === "lowercase") return text.toLowerCase();
    if (transform === "capitalize") return text.replace(/(^|[\s\-([{"'])(\p{L})/gu, (_, before, letter) => before + letter.toUpperCase());
    return text;
  }

  const textTransform = (el) => el.ownerDocument.defaultView.getComputedStyle(el).textTransform;

  function fromContent(el, walk) {
    const parts = [pseudo(el, "::before")];
    let size = 0;
    let own = null; // el's text-transform, read at its first text that shows (slotted text has its own parent)
    for (const node of childNodes(el)) {
      if (size > GATHER_LIMIT) break;
      let text = "";
      if (node.nodeType === 3) {
        text = node.data;
        const parent = node.parentElement;
        if (parent && /\S/.test(text)) text = inCase(text, parent === el ? (own ??= textTransform(el)) : textTransform(parent));
      } else if (node.nodeType === 1 && !SKIPPED.has(node.localName)) {
        text = compute(node, { ...walk, recursing: true });
        const display = node.ownerDocument.defaultView.getComputedStyle(node).display;
        if (text && !display.startsWith("inline")) text = ` ${text} `;
      }
      size += text.length;
      parts.push(text);
    }
    // Elements it owns elsewhere in the document are its content too.
    for (const owned of referenced(el, "aria-owns")) {
      if (size > GATHER_LIMIT) break;
      const text = compute(owned, { ...walk, recursing: true });
      size += text.length;
      parts.push(` ${text} `);
    }
    parts.push(pseudo(el, "::after"));
    return parts.join("");
  }

  function nativeLabel(el, role, walk) {
    const tag = el.localName;
    if (LABELABLE.has(tag) && el.labels && el.labels.length) {
      const text = [...el.labels].map((label) => compute(label, { ...walk, recursing: true, direct: true })).join(" ");
      if (TW.collapse(text)) return text;
    }
    if (tag === "input") {
      if (el.type in BUTTON_INPUTS || el.type === "button") {
        const text = el.type === "image" ? el.getAttribute("alt") || el.value : el.value;
        return text || BUTTON_INPUTS[el.type] || "";
      }
    }
    if (tag === "img" || tag === "area") return el.getAttribute("alt") || "";
    const caption = { fieldset: "legend", figure: "figcaption", table: "caption" }[tag];
    if (caption) {
      const child = [...el.children].find((item) => item.localName === caption);
      if (child) return compute(child, { ...walk, recursing: true, direct: true });
    }
    if (el.namespaceURI === "http://www.w3.org/2000/svg") {
      const title = [...el.children].find((item) => item.localName === "title");
      if (title) return title.textContent;
    }
    if ((tag === "input" || tag === "textarea") && role !== "button") {
      const text = el.getAttribute("title") || el.getAttribute("placeholder");
      if (text) return text;
    }
    return "";
  }

  // One node's text alternative. `walk` says why it is computed: `root` the element named,
  // `recursing` inside another's content, `inLabelledBy` within an aria-labelledby traversal,
  // `direct` the node was pointed at by a label or reference (then, when it is hidden, its
  // hidden content counts: `includeHidden`), `fromContent` its content counts whatever its role.
  function compute(el, walk) {
    if (walk.visited.has(el)) return "";
    walk.visited.add(el);
    let includeHidden = walk.includeHidden;
    if (!includeHidden && hiddenForNames(el)) {
      if (!walk.direct) return "";
      includeHidden = true;
    }
    const inner = { visited: walk.visited, root: walk.root, recursing: true, inLabelledBy: walk.inLabelledBy, includeHidden };
    const role = TW.roleOf(el);
    if (!walk.inLabelledBy && el.hasAttribute("aria-labelledby")) {
      const text = referenced(el, "aria-labelledby")
        .map((target) => compute(target, { ...inner, inLabelledBy: true, direct: true }))
        .join(" ");
      if (TW.collapse(text)) return text;
    }
    // A custom element's ElementInternals: the elements it is labelled by, at the step of its
    // aria-labelledby (the attribute wins); the labels of a form-associated one, as a native
    // control's.
    const internals = TW.internalsOf(el);
    if (!walk.inLabelledBy && internals && internals.labelledby && !el.hasAttribute("aria-labelledby")) {
      if (TW.collapse(internals.labelledby)) return internals.labelledby;
    }
    if (walk.recursing && el !== walk.root) {
      const value = embeddedValue(el, role);
      if (value !== null) return value;
    }
    const aria = TW.ariaOf(el, "aria-label");
    if (aria && aria.trim()) return aria;
    if (internals && internals.labels && TW.collapse(internals.labels)) return internals.labels;
    const native = nativeLabel(el, role, inner);
    if (TW.collapse(native)) return native;
    const contentCounts = TW.roles.nameFromContent.has(role) || walk.fromContent || walk.direct ||
      (walk.recursing && !TW.roles.contentNotInNames.has(role));
    if (contentCounts) {
      const text = fromContent(el, inner);
      if (TW.collapse(text)) return text;
    }
    if (!walk.recursing || el.localName === "svg") return el.getAttribute("title") || "";
    return "";
  }

  // The accessible name of `el` (collapsed, cut at 80 characters). `fromContent` forces its
  // content to count even when its role is not named by content (a label element, a heading).
  TW.accessibleName = (el, { fromContent = false } = {}) => {
    const text = compute(el, { visited: new Set(), root: el, recursing: false, fromContent, includeHidden: false });
    return TW.clip(TW.collapse(text), 80);
  };

  // The accessible description of `el`: its aria-describedby targets, hidden ones included.
  TW.accessibleDescription = (el) => {
    if (!el.hasAttribute("aria-describedby")) return "";
    const text = referenced(el, "aria-describedby")
      .map((target) => compute(target, { visited: new Set([el]), root: el, recursing: true, inLabelledBy: true, direct: true }))
      .join(" ");
    return TW.clip(TW.collapse(text), 80);
  };
})();
