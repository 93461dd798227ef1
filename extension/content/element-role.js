// Tabwarden page executor, part 2a: an element's role as the browser computes it, from the
// explicit role, the role a custom element set through ElementInternals, or the HTML element's
// implicit one (landmarks with their scoping and naming rules, table cells inside grids, SVG
// graphics), and the role tables shared with the deep read (generated/roles.js).
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("element-role")) return;
  TW.parts.add("element-role");

  TW.roles = globalThis.__tabwardenRoles;

  // What a custom element's ElementInternals hold ({role, "aria-checked", labels, labelledby...}),
  // asked of the MAIN-world observer (internals-link.js) once per element per task: a snapshot
  // asks each custom element once however many of its states it reads.
  let known = null;
  TW.internalsOf = (el) => {
    const link = globalThis.__tabwardenInternals;
    if (!link || !el.localName || !el.localName.includes("-")) return null;
    if (!known) {
      known = new Map();
      queueMicrotask(() => { known = null; });
    }
    if (!known.has(el)) known.set(el, link.ask(el));
    return known.get(el);
  };

  // An ARIA attribute as the browser reads it: the element's own attribute, else the default its
  // ElementInternals set (null when neither).
  TW.ariaOf = (el, attr) => {
    const own = el.getAttribute(attr);
    if (own !== null) return own;
    const internals = TW.internalsOf(el);
    return internals && typeof internals[attr] === "string" ? internals[attr] : null;
  };

  const INPUT_ROLES = {
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton", search: "searchbox",
    button: "button", submit: "button", reset: "button", file: "button", image: "button", color: "button",
  };
  const TAG_ROLES = {
    button: "button", textarea: "textbox", option: "option", optgroup: "group", fieldset: "group",
    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
    nav: "navigation", main: "main", form: "form", search: "search", article: "article", table: "table",
    ul: "list", ol: "list", menu: "list", dialog: "dialog", label: "label", figure: "figure",
    tr: "row", hr: "separator", progress: "progressbar", meter: "meter", output: "status", details: "group",
    caption: "caption",
  };
  // Sectioning content and roles inside which header and footer are no page landmarks.
  const SCOPING = "article, aside, main, nav, section, [role=article], [role=complementary], [role=main], [role=navigation], [role=region]";
  // Explicit roles a focusable or labelled element cannot shed (presentational role conflicts).
  const GLOBAL_STATES = ["aria-label", "aria-labelledby", "aria-describedby", "aria-live", "aria-controls"];

  TW.isEditableRoot = (el) => {
    const value = el.getAttribute("contenteditable");
    return value !== null && value !== "false";
  };

  // Labelled by an author (the condition for a section to be a region, an aside inside
  // sectioning content to be complementary, an SVG to be an image).
  function authorLabelled(el) {
    return !!(TW.collapse(el.getAttribute("aria-label")) || el.hasAttribute("aria-labelledby") || TW.collapse(el.getAttribute("title")));
  }

  function svgTitled(el) {
    for (const child of el.children) if (child.localName === "title" && TW.collapse(child.textContent)) return true;
    return false;
  }

  function tableOf(el) {
    const table = el.closest("table, [role=grid], [role=treegrid], [role=table]");
    return table ? TW.roleOf(table) : "table";
  }

  // The role of the table, grid or tree grid an element sits in ("table" when there is none).
  TW.tableRoleOf = tableOf;

  function implicitRole(el) {
    const tag = el.localName;
    switch (tag) {
      case "a":
      case "area":
        return el.hasAttribute("href") ? "link" : "generic";
      case "input": {
        if (el.type === "hidden") return "none";
        if (el.hasAttribute("list") && /^(text|search|url|tel|email)$/.test(el.type)) return "combobox";
        return INPUT_ROLES[el.type] || "textbox";
      }
      case "select":
        return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "img":
        return el.getAttribute("alt") === "" && !authorLabelled(el) ? "none" : "img";
      case "summary":
        return el.parentElement && el.parentElement.localName === "details" ? "button" : "generic";
      case "header":
        return el.parentElement && el.parentElement.closest(SCOPING) ? "generic" : "banner";
      case "footer":
        return el.parentElement && el.parentElement.closest(SCOPING) ? "generic" : "contentinfo";
      case "aside":
        return !el.parentElement || !el.parentElement.closest("article, aside, nav, section") || authorLabelled(el) ? "complementary" : "generic";
      case "section":
        return authorLabelled(el) ? "region" : "generic";
      case "li": {
        // An item is a list's only: in a tab list or a menu bar built of <ul> it is nothing (as in
        // Chromium), and in a list made presentational it is presentational too.
        const parent = el.parentElement;
        if (!parent) return "listitem";
        const around = TW.roleOf(parent);
        if (around === "list" || around === "directory") return "listitem";
        return around === "none" ? "none" : "generic";
      }
      case "td":
        return /grid$/.test(tableOf(el)) ? "gridcell" : "cell";
      case "th": {
        const scope = (el.getAttribute("scope") || "").toLowerCase();
        if (scope === "row" || scope === "rowgroup") return "rowheader";
        if (scope === "col" || scope === "colgroup" || el.closest("thead")) return "columnheader";
        // Without a scope, a header in a row of data cells heads that row (as in Chromium: a
        // key table's "Down Arrow"); in a row of headers, its column.
        const row = el.parentElement;
        return row && [...row.children].some((cell) => cell.localName === "td") ? "rowheader" : "columnheader";
      }
      case "svg":
        return authorLabelled(el) || svgTitled(el) ? "img" : "generic";
      default:
        if (TW.isEditableRoot(el)) return "textbox";
        return TAG_ROLES[tag] || "generic";
    }
  }

  // The element's role: the first token of its role attribute, unless that is presentational on
  // an element the browser must keep (focusable or labelled), then the implicit role.
  TW.roleOf = (el) => {
    const explicit = (TW.ariaOf(el, "role") || "").trim().split(/\s+/)[0].toLowerCase();
    if (explicit && explicit !== "none" && explicit !== "presentation") return explicit;
    if (explicit && !el.hasAttribute("tabindex") && !GLOBAL_STATES.some((attr) => el.hasAttribute(attr))) return "none";
    return implicitRole(el);
  };

  // The shared tables, asked by role: kept as structure, listing children under a ref, a landmark.
  TW.isStructuralRole = (role) => TW.roles.structural.has(role);
  TW.isDescendingRole = (role) => TW.roles.descending.has(role);
  TW.isLandmarkRole = (role) => TW.roles.landmark.has(role);
})();
