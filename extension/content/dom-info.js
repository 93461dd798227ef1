// Tabwarden page executor, part 2c: what an element shows and whether it is interactive: state
// attributes and values, refs for actionable nodes, hints and destinations. Roles come from
// element-role.js and names from accessible-name.js. Pure functions over the DOM, shared by the
// snapshot, ref recovery and the actions.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("dom-info")) return;
  TW.parts.add("dom-info");

  // SVG's title and desc are names and descriptions, never text of their own.
  const SKIPPED_TAGS = new Set(["script", "style", "noscript", "template", "meta", "link", "head", "title", "desc"]);
  const INTERACTIVE_TAGS = new Set(["a", "button", "input", "select", "textarea", "summary", "option"]);
  // Input types whose role already says what they are: no `type=` attribute for these.
  const TYPES_SAID_BY_ROLE = new Set(["text", "checkbox", "radio", "range", "number", "search", "button"]);
  // Input types that take typed text.
  const TEXT_INPUT_TYPES = new Set([
    "text", "search", "url", "tel", "email", "password", "number", "date", "datetime-local", "month", "time", "week",
  ]);
  const BUTTON_INPUT_TYPES = new Set(["button", "submit", "reset", "image"]);
  // What makes an element actionable by itself: a pointer-cursor wrapper around one of these
  // leaves the ref to it.
  const ACTIONABLE = [
    "a[href]", "button", "input", "select", "textarea", "summary", "[tabindex]", "[contenteditable]",
    ...[...TW.roles.interactive].map((role) => `[role~="${role}"]`),
  ].join(", ");

  TW.isSkippedTag = (tag) => SKIPPED_TAGS.has(tag);

  // Hidden for the snapshot: the whole subtree goes.
  TW.isHidden = (el, style) =>
    TW.ariaOf(el, "aria-hidden") === "true" ||
    el.hasAttribute("hidden") ||
    style.display === "none" ||
    style.visibility === "hidden" ||
    style.visibility === "collapse";

  // Whether anything inside the element (its open shadow root included) is actionable itself.
  TW.hasActionableDescendant = (el) => {
    if (el.querySelector(ACTIONABLE)) return true;
    const shadow = el.shadowRoot;
    return !!(shadow && shadow.querySelector(ACTIONABLE));
  };

  function tabindexOf(el) {
    const value = el.getAttribute("tabindex");
    return value === null ? null : Number.parseInt(value, 10);
  }

  // The cursor is inherited: a child showing its parent's pointer is not a target of its own.
  function ownPointer(el, style) {
    if (style.cursor !== "pointer") return false;
    const parent = el.parentElement || (el.parentNode && el.parentNode.host);
    return !parent || el.ownerDocument.defaultView.getComputedStyle(parent).cursor !== "pointer";
  }

  // Semantic controls, interactive roles, tab stops and editable roots always count, and so do
  // structural roles made focusable (a feed's articles, a tree grid's rows), even around other
  // controls. A pointer cursor counts only where it starts and only on the innermost such
  // element (a clickable wrapper around a button leaves the ref to the button).
  TW.isInteractive = (el, role, style) => {
    if (INTERACTIVE_TAGS.has(el.localName) || TW.roles.interactive.has(role) || TW.isEditableRoot(el)) return true;
    const tabindex = tabindexOf(el);
    if (tabindex !== null && !Number.isNaN(tabindex)) {
      if (tabindex >= 0 || TW.roles.focusableStructure.has(role)) return true;
    }
    return ownPointer(el, style) && !TW.hasActionableDescendant(el);
  };

  // A snapshot is taken in one synchronous walk, in which the page cannot change: what is asked
  // of an element more than once during it (a field's name for its ref line, then for each of
  // its credential checks) is worked out once. Outside a walk nothing is kept.
  let walkMemo = null;
  TW.duringWalk = (take) => {
    const outer = walkMemo;
    walkMemo = outer || new Map();
    try {
      return take();
    } finally {
      walkMemo = outer;
    }
  };
  TW.onceInWalk = (el, what, compute) => {
    if (!walkMemo) return compute();
    let known = walkMemo.get(el);
    if (!known) walkMemo.set(el, (known = new Map()));
    if (!known.has(what)) known.set(what, compute());
    return known.get(what);
  };

  // The accessible name (`fromContent`: its text counts even when its role is not named by
  // content, as for a heading or a clickable generic element).
  TW.nameOf = (el, fromContent = true) =>
    TW.onceInWalk(el, fromContent ? "name from content" : "name", () => TW.accessibleName(el, { fromContent }));

  // Whether the element's own text names it: roles named by content, and the generic elements
  // that are clickable only by their look.
  TW.nameFromContent = (role, el) =>
    el.localName !== "select" && (TW.roles.nameFromContent.has(role) || role === "generic" || role === "none" || role === "label");

  TW.isPassword = (el) => el.localName === "input" && el.type === "password";

  // State attributes, always in the same order, so an unchanged element gives the same line
  // (the post-write diff compares lines). Credential values are never shown (field-facts.js).
  TW.attributesOf = (el, role) => {
    const attrs = [];
    const tag = el.localName;
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) attrs.push(`level=${heading[1]}`);
    else if (role === "heading" && TW.ariaOf(el, "aria-level")) attrs.push(`level=${Number.parseInt(TW.ariaOf(el, "aria-level"), 10) || 2}`);
    if (tag === "input" || tag === "textarea" || tag === "select") {
      const type = tag === "input" ? el.type : "";
      if (type && !TYPES_SAID_BY_ROLE.has(type)) attrs.push(`type=${type}`);
      if ((type === "checkbox" || type === "radio") && el.checked) attrs.push("checked");
      else if (TW.isCredentialField(el)) {
        if (el.value) attrs.push("value hidden");
      } else if (!BUTTON_INPUT_TYPES.has(type) && type !== "checkbox" && type !== "radio" && type !== "file" && el.value) {
        attrs.push(`value=${TW.quote(TW.clip(el.value, 40))}`);
      }
      if (el.readOnly) attrs.push("readonly");
    }
    if (el.matches(":disabled") || TW.ariaOf(el, "aria-disabled") === "true") attrs.push("disabled");
    const expanded = TW.ariaOf(el, "aria-expanded");
    if (expanded === "true") attrs.push("expanded");
    else if (expanded === "false") attrs.push("collapsed");
    else if (tag === "summary" && el.parentElement && el.parentElement.localName === "details") {
      attrs.push(el.parentElement.open ? "expanded" : "collapsed");
    }
    if (TW.ariaOf(el, "aria-selected") === "true" || (tag === "option" && el.selected)) attrs.push("selected");
    if (TW.ariaOf(el, "aria-checked") === "true" && !attrs.includes("checked")) attrs.push("checked");
    // A switch is a toggle by its role: off is a state to say, as a toggle button's is.
    if (role === "switch" && !attrs.includes("checked")) attrs.push("checked=false");
    // A modal dialog: what is behind it cannot be used while it is open.
    if ((role === "dialog" || role === "alertdialog")
        && (TW.ariaOf(el, "aria-modal") === "true" || (tag === "dialog" && el.matches(":modal")))) attrs.push("modal");
    const invalid = TW.ariaOf(el, "aria-invalid");
    if (invalid && invalid !== "false") attrs.push("invalid");
    const current = TW.ariaOf(el, "aria-current");
    if (current && current !== "false") attrs.push("current");
    // A feed or a region still loading (more articles on their way): wait before reading on.
    if ((TW.ariaOf(el, "aria-busy") || "").trim().toLowerCase() === "true") attrs.push("busy");
    attrs.push(...ariaStates(el, role, attrs));
    attrs.push(...declaredSize(el, role));
    return attrs;
  };

  const SIZED = new Set(["grid", "table", "treegrid"]);

  // A grid that shows only some of its rows (paged, virtual) says how many it has in all.
  function declaredSize(el, role) {
    if (!SIZED.has(role)) return [];
    const shown = [];
    for (const [attr, label] of [["aria-rowcount", "rows"], ["aria-colcount", "cols"]]) {
      const count = Number.parseInt(el.getAttribute(attr), 10);
      if (count === -1) shown.push(`${label}=unknown`);
      else if (count > 0) shown.push(`${label}=${count}`);
    }
    return shown;
  }

  function rangeValue(el, role) {
    if (!TW.roles.range.has(role) || el.localName === "input") return [];
    const text = TW.collapse(TW.ariaOf(el, "aria-valuetext"));
    const now = TW.ariaOf(el, "aria-valuenow");
    const shown = [];
    const numeric = now !== null && now.trim() !== "" && Number.isFinite(Number(now));
    if (text) {
      shown.push(`value=${TW.quote(TW.clip(text, 40))}`);
      // The number beside its words ("July" is 6): keys and bounds go by the number.
      if (numeric && text !== String(Number(now))) shown.push(`now=${Number(now)}`);
    } else if (numeric) shown.push(`value=${Number(now)}`);
    else if (el.localName === "progress" || el.localName === "meter") shown.push(`value=${el.value}`);
    else if (role === "slider" || role === "scrollbar") {
      // Without a value, ARIA gives these the middle of their range (as the browser reports it).
      const number = (attr, fallback) => {
        const value = TW.ariaOf(el, attr);
        return value !== null && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : fallback;
      };
      const low = number("aria-valuemin", 0);
      const high = number("aria-valuemax", 100);
      if (high >= low) shown.push(`value=${low + (high - low) / 2}`);
    }
    return shown;
  }

  function bounds(el, role) {
    if (!TW.roles.range.has(role) || role === "progressbar") return [];
    const native = el.localName === "input" && (el.type === "range" || el.type === "number");
    const min = TW.ariaOf(el, "aria-valuemin") ?? (native ? el.getAttribute("min") : null);
    const max = TW.ariaOf(el, "aria-valuemax") ?? (native ? el.getAttribute("max") : null);
    const shown = [];
    if (min !== null && min.trim() !== "" && Number.isFinite(Number(min))) shown.push(`min=${Number(min)}`);
    if (max !== null && max.trim() !== "" && Number.isFinite(Number(max))) shown.push(`max=${Number(max)}`);
    return shown;
  }

  const SORTS = new Set(["ascending", "descending", "other"]);

  // A column or row header that says the table is sorted by it.
  TW.isSortedHeader = (el, role) => (role === "columnheader" || role === "rowheader") && SORTS.has(TW.ariaOf(el, "aria-sort"));

  // The focused element as its snapshot line shows it (role, name, states), and the option a
  // focused widget points at, for the answer of trusted input: "" when nothing has the focus.
  TW.focusLine = () => {
    if (!holdsFocus(document)) return "";
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el || el === document.body || el === document.documentElement) return "";
    const describe = (node) => {
      const { role, name } = TW.roleAndName(node);
      const attrs = TW.attributesOf(node, role).map((attr) => ` [${attr}]`).join("");
      return `${role}${name ? ` ${TW.quote(TW.clip(name, 80))}` : ""}${attrs}`;
    };
    const id = TW.ariaOf(el, "aria-activedescendant");
    const active = id ? el.ownerDocument.getElementById(id) : null;
    return active ? `${describe(el)}, at ${describe(active)}` : describe(el);
  };

  // Where keys go: "focused" for the focused element, "active" for the option or cell a focused
  // composite widget points at with aria-activedescendant (its focus stays on the widget), else "".
  TW.focusOf = (el) => {
    const root = el.getRootNode();
    const active = root.activeElement;
    if (!active || active === el.ownerDocument.body || !holdsFocus(el.ownerDocument)) return "";
    // A shadow host is not where keys go when the focus is inside its shadow root.
    if (active === el) return el.shadowRoot && el.shadowRoot.activeElement ? "" : "focused";
    return el.id && active.getAttribute("aria-activedescendant") === el.id ? "active" : "";
  };

  // Whether the document's own active element is where keys go: a frame's document keeps its
  // active element after the focus left the frame, so every frame up the chain must hold the
  // focus too (as far as this document may look: a parent of another origin is not asked).
  function holdsFocus(doc) {
    let win = doc.defaultView;
    for (let depth = 0; win && depth < 16; depth += 1) {
      let owner = null;
      try {
        owner = win.frameElement;
      } catch (_) {
        return true;
      }
      if (!owner) return true;
      if (owner.ownerDocument.activeElement !== owner) return false;
      win = owner.ownerDocument.defaultView;
    }
    return true;
  }

  // The ARIA states the lines above do not cover: mixed checkboxes, toggle buttons, values and
  // bounds of range widgets, required and read-only fields.
  function ariaStates(el, role, before) {
    const out = [];
    if (TW.ariaOf(el, "aria-checked") === "mixed" || (el.localName === "input" && el.type === "checkbox" && el.indeterminate)) {
      const at = before.indexOf("checked");
      if (at >= 0) before.splice(at, 1);
      out.push("checked=mixed");
    }
    // A toggle button says so when it is off too: without it, Bold reads as a plain button.
    const pressed = (TW.ariaOf(el, "aria-pressed") || "").trim().toLowerCase();
    if (pressed === "true") out.push("pressed");
    else if (pressed === "mixed") out.push("pressed=mixed");
    else if (pressed === "false") out.push("pressed=false");
    out.push(...rangeValue(el, role), ...bounds(el, role));
    if (TW.isSortedHeader(el, role)) out.push(`sort=${TW.ariaOf(el, "aria-sort")}`);
    // A flat tree grid or tree says its nesting only through aria-level.
    const level = Number.parseInt(TW.ariaOf(el, "aria-level"), 10);
    if ((role === "treeitem" || role === "row") && level > 0) out.push(`level=${level}`);
    if (el.required || TW.ariaOf(el, "aria-required") === "true") out.push("required");
    if (TW.ariaOf(el, "aria-readonly") === "true" && !before.includes("readonly")) out.push("readonly");
    return out;
  }

  const SUBMITTERS = new Set(["submit", "image"]);
  const NON_SUBMITTERS = new Set(["button", "reset"]);
  const MAX_URL = 8192;

  // Where acting on the element can take the page: a link's target, or the form its value is
  // sent with (the submitter's formaction/formmethod/formtarget over the form's own). URLs are
  // the browser's resolution (absolute; `javascript:` and `data:` kept as they are, for the host
  // to judge). Null when the element leads nowhere by itself.
  TW.destinationOf = (el) => {
    const link = el.closest("a[href], area[href]");
    if (link) return { url: String(link.href).slice(0, MAX_URL), method: "GET", newTab: link.target === "_blank" };
    const form = el.form || el.closest("form");
    if (!form) return null;
    const submitter = (el.localName === "button" && el.type === "submit") ||
      (el.localName === "input" && SUBMITTERS.has(el.type)) ? el : null;
    // A plain or reset button neither submits nor carries a value; its script is the guard's.
    if (!submitter && (el.localName === "button" || (el.localName === "input" && NON_SUBMITTERS.has(el.type)))) return null;
    const own = (attr) => submitter && submitter.hasAttribute(attr);
    const method = String(own("formmethod") ? submitter.formMethod : form.method).toUpperCase();
    if (method === "DIALOG") return null;  // closes a dialog, sends nothing
    const url = own("formaction") ? submitter.formAction : form.action;
    const target = own("formtarget") ? submitter.formTarget : form.target;
    return { url: String(url).slice(0, MAX_URL), method, newTab: target === "_blank" };
  };

  // An element's role and accessible name, computed as the snapshot computes them for its refs
  // (what the host's hint of the ref holds, and what a write expects to find at dispatch).
  TW.roleAndName = (el, role = TW.roleOf(el)) => {
    return { role, name: TW.nameOf(el, TW.nameFromContent(role, el)) };
  };

  // What the host and ref recovery know an element by. A field's value goes to the host only,
  // and never a credential's (field-facts.js).
  TW.hintOf = (el, role, name) => {
    const hint = { role, name, tag: el.localName };
    if (el.localName === "input") hint.inputType = el.type;
    const label = TW.ariaOf(el, "aria-label");
    if (label) hint.label = label.slice(0, 200);
    const placeholder = el.getAttribute("placeholder");
    if (placeholder) hint.placeholder = placeholder.slice(0, 200);
    const destination = TW.destinationOf(el);
    if (destination) hint.destination = destination;
    const field = TW.fieldFactsOf(el);
    if (field) Object.assign(hint, field);
    Object.assign(hint, commitFactsOf(el));
    return hint;
  };

  const MAX_HEADING = 160;
  const MAX_FORM_FIELDS = 30;
  const HEADINGS = "h1, h2, h3, h4, h5, h6, [role=heading], legend, dialog [aria-label]";

  // What the gatekeeper needs to tell a commit from a step: whether the element submits its form,
  // what kinds of field that form carries (autocomplete tokens, else input types), and the
  // nearest heading above it (its dialog's, when it is in one). The page chooses all of it, so
  // it only ever names what an action does; values are judged on their own.
  const commitFactsOf = (el) => {
    const facts = {};
    const form = el.form || el.closest("form");
    const submitter = (el.localName === "button" && el.type === "submit") ||
      (el.localName === "input" && SUBMITTERS.has(el.type));
    if (form && submitter) facts.submits = true;
    if (form && (submitter || TW.isTextInput(el) || el.localName === "textarea")) {
      const kinds = [];
      for (const field of form.elements) {
        if (kinds.length >= MAX_FORM_FIELDS) break;
        if (field.localName !== "input" && field.localName !== "textarea" && field.localName !== "select") continue;
        if (field.type === "hidden" || field.type === "submit" || field.type === "button") continue;
        const auto = (field.getAttribute("autocomplete") || "").trim().toLowerCase();
        const kind = auto && auto !== "on" && auto !== "off" ? auto.split(/\s+/).pop() : (field.type || field.localName);
        if (!kinds.includes(kind)) kinds.push(kind.slice(0, 40));
      }
      if (kinds.length) facts.formFields = kinds;
    }
    const heading = nearestHeading(el);
    if (heading) facts.heading = heading;
    return facts;
  };

  const HEADING_ROLES = new Set(["button", "menuitem"]);
  const MAX_LEVELS = 6;
  const MAX_SIBLINGS = 8;
  const headingText = (node) => node.textContent.trim().replace(/\s+/g, " ").slice(0, MAX_HEADING);

  // Only for what can commit by being pressed (buttons, menu items): links go by their URL. The
  // walk is bounded (a few ancestors, a few siblings each) so a large page's snapshot stays fast.
  const nearestHeading = (el) => {
    if (!HEADING_ROLES.has(TW.roleOf(el))) return "";
    const dialog = el.closest("dialog, [role=dialog], [role=alertdialog]");
    if (dialog) {
      const label = dialog.getAttribute("aria-label");
      if (label && label.trim()) return label.trim().slice(0, MAX_HEADING);
      const named = dialog.querySelector("h1, h2, h3, h4, h5, h6, [role=heading]");
      if (named && named.textContent.trim()) return headingText(named);
    }
    let node = el;
    for (let level = 0; node && level < MAX_LEVELS; level += 1) {
      let sibling = node.previousElementSibling;
      for (let seen = 0; sibling && seen < MAX_SIBLINGS; seen += 1) {
        if (sibling.matches(HEADINGS)) return headingText(sibling);
        const inner = sibling.querySelectorAll(HEADINGS);
        if (inner.length && inner[inner.length - 1].textContent.trim()) return headingText(inner[inner.length - 1]);
        sibling = sibling.previousElementSibling;
      }
      node = node.parentElement;
    }
    return "";
  };

  TW.sameHint = (a, b) =>
    a.role === b.role && a.name === b.name && a.tag === b.tag && a.inputType === b.inputType &&
    a.label === b.label && a.placeholder === b.placeholder;

  // ---- image maps. An <area> has no box of its own (it is display: none); it shows through the
  // image that uses its map, which is where Chromium's accessibility tree lists it and where a
  // pointer reaches it.

  // The map an image uses: `usemap` names it after a '#' (what comes before is ignored), the
  // first map of that name in the image's own tree, as Chromium looks it up.
  function usedMap(img) {
    const usemap = img.getAttribute("usemap");
    const at = usemap ? usemap.indexOf("#") : -1;
    if (at < 0 || at === usemap.length - 1) return null;
    const name = usemap.slice(at + 1);
    for (const map of img.getRootNode().querySelectorAll("map")) if (map.getAttribute("name") === name) return map;
    return null;
  }

  // The map an image uses when it holds areas that are links: only those are (links without an
  // href, `nohref` ones included, are nothing to the browser).
  TW.usedMap = (img) => {
    const map = img.localName === "img" ? usedMap(img) : null;
    return map && map.querySelector("area[href]") ? map : null;
  };

  TW.linkAreas = (map) => [...map.querySelectorAll("area[href]")]
    .filter((area) => area.getAttribute("aria-hidden") !== "true" && !area.hasAttribute("hidden"));

  // The first rendered image whose map holds the area, or null.
  TW.imageOfArea = (area) => {
    const map = area.closest("map");
    if (!map || !map.getAttribute("name")) return null;
    for (const img of map.getRootNode().querySelectorAll("img[usemap]")) {
      if (usedMap(img) === map && img.getClientRects().length > 0) return img;
    }
    return null;
  };

  // The bounds of the area's shape over its image, in its document's viewport, clipped to the
  // image (an empty rect when it shows nowhere). Coords are CSS pixels from the image's border
  // box, scaled by CSS zoom only: an image shown larger or smaller than its file keeps them.
  function areaBounds(area, img) {
    const box = img.getBoundingClientRect();
    const zoom = img.currentCSSZoom || 1;
    const n = (area.getAttribute("coords") || "").split(/[\s,;]+/).filter(Boolean).map((part) => (Number.parseFloat(part) || 0) * zoom);
    const shape = (area.getAttribute("shape") || "").trim().toLowerCase();
    let edges = null;  // [left, top, right, bottom] from the image's corner
    if (shape === "default") edges = [0, 0, box.width, box.height];
    else if (shape === "circle" || shape === "circ") {
      if (n.length >= 3 && n[2] > 0) edges = [n[0] - n[2], n[1] - n[2], n[0] + n[2], n[1] + n[2]];
    } else if (shape === "poly" || shape === "polygon") {
      if (n.length >= 6) {
        const xs = n.filter((_, i) => i % 2 === 0 && i + 1 < n.length);
        const ys = n.filter((_, i) => i % 2 === 1);
        edges = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
      }
    } else if (n.length >= 4) {  // rect, and what the browser reads as one (no or an unknown shape)
      edges = [Math.min(n[0], n[2]), Math.min(n[1], n[3]), Math.max(n[0], n[2]), Math.max(n[1], n[3])];
    }
    const left = box.left + Math.max(0, edges ? edges[0] : 0);
    const top = box.top + Math.max(0, edges ? edges[1] : 0);
    const right = edges ? box.left + Math.min(box.width, edges[2]) : left;
    const bottom = edges ? box.top + Math.min(box.height, edges[3]) : top;
    const width = Math.max(0, right - left);
    const height = Math.max(0, bottom - top);
    return { left, top, right: left + width, bottom: top + height, width, height, x: left, y: top };
  }

  const EMPTY_RECT = { left: 0, top: 0, right: 0, bottom: 0, width: 0, height: 0, x: 0, y: 0 };

  // The element's box in its document's viewport: an area's is its shape's bounds over its image.
  TW.boxOf = (el) => {
    if (el.localName !== "area") return el.getBoundingClientRect();
    const img = TW.imageOfArea(el);
    return img ? areaBounds(el, img) : EMPTY_RECT;
  };

  // The element whose layout box stands for the element's: an area's image.
  TW.layoutOwner = (el) => (el.localName === "area" && TW.imageOfArea(el)) || el;

  const AREA_GRID = 15;

  // Where a pointer lands on the area: the point nearest its middle that the browser's own hit
  // test gives to this area (not to an earlier area of the map over it, nor to anything over the
  // image), sampled over its bounds within the viewport. When no point does (covered, out of
  // view), the middle of its bounds, for the occlusion check to name what is there.
  TW.areaPoint = (area) => {
    const rect = TW.boxOf(area);
    const win = area.ownerDocument.defaultView;
    const middle = { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
    const left = Math.max(rect.left, 0);
    const top = Math.max(rect.top, 0);
    const right = Math.min(rect.right, win.innerWidth);
    const bottom = Math.min(rect.bottom, win.innerHeight);
    if (right <= left || bottom <= top) return middle;
    const finder = area.getRootNode().elementFromPoint ? area.getRootNode() : area.ownerDocument;
    const points = [{ x: (left + right) / 2, y: (top + bottom) / 2 }];
    for (let i = 0; i < AREA_GRID; i++) {
      for (let j = 0; j < AREA_GRID; j++) {
        points.push({ x: left + (right - left) * (i + 0.5) / AREA_GRID, y: top + (bottom - top) * (j + 0.5) / AREA_GRID });
      }
    }
    const away = (p) => (p.x - middle.x) ** 2 + (p.y - middle.y) ** 2;
    points.sort((a, b) => away(a) - away(b));
    return points.find((p) => finder.elementFromPoint(p.x, p.y) === area) || middle;
  };

  TW.isTextInput = (el) => el.localName === "input" && TEXT_INPUT_TYPES.has(el.type);
  TW.isWritable = (el) =>
    ((TW.isTextInput(el) || el.localName === "textarea") && !el.readOnly) ||
    (el.isContentEditable && el.localName !== "input" && el.localName !== "textarea");
})();
