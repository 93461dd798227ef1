// Tabwarden page executor, part 2: what an element is (role, accessible name, state attributes)
// and whether it is interactive. Pure functions over the DOM, shared by the snapshot, ref
// recovery and the actions.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("dom-info")) return;
  TW.parts.add("dom-info");

  const SKIPPED_TAGS = new Set(["script", "style", "noscript", "template", "meta", "link", "head", "svg", "path", TW.OVERLAY_TAG]);
  const INTERACTIVE_TAGS = new Set(["a", "button", "input", "select", "textarea", "summary", "option"]);
  const INTERACTIVE_ROLES = new Set([
    "button", "link", "checkbox", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "switch",
    "combobox", "slider", "radio", "searchbox", "textbox", "spinbutton",
  ]);
  // Interactive nodes are leaves (their name summarises them) except these, which list children.
  const DESCENDING_ROLES = new Set(["form", "combobox", "list", "listbox", "table", "dialog", "navigation"]);
  const STRUCTURAL_ROLES = new Set(["heading", "navigation", "main", "form", "table", "list", "listitem", "dialog", "img"]);
  const INNER_CONTROLS = "a, button, input, select, textarea, summary, [role], [tabindex], [contenteditable]";
  const INPUT_ROLES = {
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton", search: "searchbox",
    button: "button", submit: "button", reset: "button", file: "button", image: "button",
  };
  // Input types whose role already says what they are: no `type=` attribute for these.
  const TYPES_SAID_BY_ROLE = new Set(["text", "checkbox", "radio", "range", "number", "search", "button"]);
  const TAG_ROLES = {
    a: "link", button: "button", select: "combobox", textarea: "textbox", summary: "button", option: "option",
    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
    img: "img", nav: "navigation", main: "main", form: "form", table: "table", ul: "list", ol: "list",
    li: "listitem", dialog: "dialog", label: "label",
  };
  // Input types that take typed text.
  const TEXT_INPUT_TYPES = new Set([
    "text", "search", "url", "tel", "email", "password", "number", "date", "datetime-local", "month", "time", "week",
  ]);
  const BUTTON_INPUT_TYPES = new Set(["button", "submit", "reset", "image"]);

  TW.isSkippedTag = (tag) => SKIPPED_TAGS.has(tag);

  TW.roleOf = (el) => {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit) return explicit.toLowerCase();
    const tag = el.localName;
    if (tag === "input") return INPUT_ROLES[el.type] || "textbox";
    if (tag === "select") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (TW.isEditableRoot(el)) return "textbox";
    return TAG_ROLES[tag] || "generic";
  };

  TW.isStructuralRole = (role) => STRUCTURAL_ROLES.has(role);
  TW.isDescendingRole = (role) => DESCENDING_ROLES.has(role);

  // Hidden for the snapshot: the whole subtree goes.
  TW.isHidden = (el, style) =>
    el.getAttribute("aria-hidden") === "true" ||
    el.hasAttribute("hidden") ||
    style.display === "none" ||
    style.visibility === "hidden" ||
    style.visibility === "collapse";

  TW.isEditableRoot = (el) => {
    const value = el.getAttribute("contenteditable");
    return value !== null && value !== "false";
  };

  function hasInteractiveDescendant(el) {
    if (el.querySelector(INNER_CONTROLS)) return true;
    const shadow = el.shadowRoot;
    return !!(shadow && shadow.querySelector(INNER_CONTROLS));
  }

  // Recall first: semantic controls always count; role, tabindex, contenteditable and a pointer
  // cursor count only on the innermost such element (so a clickable wrapper around a button
  // leaves the ref to the button, but a clickable div with no control inside keeps its own).
  TW.isInteractive = (el, role, style) => {
    if (INTERACTIVE_TAGS.has(el.localName)) return true;
    const tabindex = el.getAttribute("tabindex");
    const hit =
      INTERACTIVE_ROLES.has(role) ||
      (tabindex !== null && Number.parseInt(tabindex, 10) >= 0) ||
      TW.isEditableRoot(el) ||
      style.cursor === "pointer";
    return hit && !hasInteractiveDescendant(el);
  };

  function idRefText(el, ids) {
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      if (!id) continue;
      const target = root.getElementById ? root.getElementById(id) : root.querySelector(`#${CSS.escape(id)}`);
      if (target) parts.push(TW.collapse(target.textContent));
    }
    return parts.join(" ").trim();
  }

  function ownText(el) {
    let text = "";
    for (const node of el.childNodes) if (node.nodeType === 3) text += node.data;
    return TW.collapse(text);
  }

  // The accessible name: the first source that gives one, from aria-labelledby down to the
  // element's own text; `fromContent` says whether that text may be used as a last resort (it
  // may not for lists, forms, selects...).
  TW.nameOf = (el, fromContent = true) => {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = idRefText(el, labelledBy);
      if (text) return TW.clip(text, 80);
    }
    const aria = TW.collapse(el.getAttribute("aria-label"));
    if (aria) return TW.clip(aria, 80);
    if (el.id && /^(input|select|textarea|button|meter|output|progress)$/.test(el.localName)) {
      const root = el.getRootNode();
      const label = root.querySelector && root.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (label) {
        const text = TW.collapse(label.textContent);
        if (text) return TW.clip(text, 80);
      }
    }
    const wrapping = el.parentElement && el.parentElement.closest("label");
    if (wrapping && el.localName !== "label") {
      const text = ownText(wrapping);
      if (text) return TW.clip(text, 80);
    }
    for (const attr of ["placeholder", "alt", "title"]) {
      const text = TW.collapse(el.getAttribute(attr));
      if (text) return TW.clip(text, 80);
    }
    if (el.localName === "input" && BUTTON_INPUT_TYPES.has(el.type)) {
      const text = TW.collapse(el.value || (el.type === "submit" ? "Submit" : el.type === "reset" ? "Reset" : ""));
      if (text) return TW.clip(text, 80);
    }
    if (!fromContent) return "";
    return TW.clip(TW.collapse(el.textContent), 80);
  };

  // Roles whose name may come from their text (ARIA "name from content").
  const NAME_FROM_CONTENT = new Set([
    "button", "link", "checkbox", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "switch",
    "radio", "heading", "generic", "label", "cell", "row", "columnheader", "rowheader", "treeitem", "tooltip",
  ]);
  TW.nameFromContent = (role, el) => el.localName !== "select" && NAME_FROM_CONTENT.has(role);

  TW.isPassword = (el) => el.localName === "input" && el.type === "password";

  // State attributes, always in the same order, so an unchanged element gives the same line
  // (the post-write diff compares lines). Credential values are never shown (field-facts.js).
  TW.attributesOf = (el, role) => {
    const attrs = [];
    const tag = el.localName;
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) attrs.push(`level=${heading[1]}`);
    else if (role === "heading" && el.getAttribute("aria-level")) attrs.push(`level=${Number.parseInt(el.getAttribute("aria-level"), 10) || 2}`);
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
    if (el.matches(":disabled") || el.getAttribute("aria-disabled") === "true") attrs.push("disabled");
    const expanded = el.getAttribute("aria-expanded");
    if (expanded === "true") attrs.push("expanded");
    else if (expanded === "false") attrs.push("collapsed");
    else if (tag === "summary" && el.parentElement && el.parentElement.localName === "details") {
      attrs.push(el.parentElement.open ? "expanded" : "collapsed");
    }
    if (el.getAttribute("aria-selected") === "true" || (tag === "option" && el.selected)) attrs.push("selected");
    if (el.getAttribute("aria-checked") === "true" && !attrs.includes("checked")) attrs.push("checked");
    const invalid = el.getAttribute("aria-invalid");
    if (invalid && invalid !== "false") attrs.push("invalid");
    const current = el.getAttribute("aria-current");
    if (current && current !== "false") attrs.push("current");
    return attrs;
  };

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
    const label = el.getAttribute("aria-label");
    if (label) hint.label = label.slice(0, 200);
    const placeholder = el.getAttribute("placeholder");
    if (placeholder) hint.placeholder = placeholder.slice(0, 200);
    const destination = TW.destinationOf(el);
    if (destination) hint.destination = destination;
    const field = TW.fieldFactsOf(el);
    if (field) Object.assign(hint, field);
    return hint;
  };

  TW.sameHint = (a, b) =>
    a.role === b.role && a.name === b.name && a.tag === b.tag && a.inputType === b.inputType &&
    a.label === b.label && a.placeholder === b.placeholder;

  TW.isTextInput = (el) => el.localName === "input" && TEXT_INPUT_TYPES.has(el.type);
  TW.isWritable = (el) =>
    ((TW.isTextInput(el) || el.localName === "textarea") && !el.readOnly) ||
    (el.isContentEditable && el.localName !== "input" && el.localName !== "textarea");
})();
