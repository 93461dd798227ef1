// Tabwarden page executor, part 3: the page snapshot. One depth-first walk builds a list of
// entries (ref lines, structural lines, text runs, frame lines) and the ref map; a budget pass
// then drops what matters least first and always says how much it dropped.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("snapshot")) return;
  TW.parts.add("snapshot");

  const MAX_FRAME_DEPTH = 4;
  const MAX_DOM_DEPTH = 512;
  const MAX_PRIOR_HINTS = 500;
  // Ref lines survive the budget, but not without end: past budget + this many characters,
  // off-screen ref lines are dropped too, and counted in the marker (find_in_page still sees them).
  const REF_OVERFLOW_CHARS = 12000;
  // The hashes of left-out lines sent with a snapshot, at most (a very large page's diff may
  // then list a line the budget left out as added or removed).
  const MAX_HIDDEN_HASHES = 20000;
  // A write's snapshot keeps the lines that are new since the one before against its budget (the
  // write's effect: a status text, a state), at most this many; a page that changed throughout
  // is fitted as any other.
  const MAX_NEW_KEPT = 200;
  const TEXT_LIMIT = 120;
  // read_page's `full` mode: a text run is cut only past this many characters.
  const FULL_TEXT_LIMIT = 4000;
  const CAPTIONS = new Set(["legend", "caption", "figcaption"]);
  const TABLES = new Set(["table", "grid", "treegrid"]);
  const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
  const HEADER_ROLES = new Set(["columnheader", "rowheader"]);
  const CELL_LIMIT = 80;
  const ROW_LIMIT = 400;
  // What a plain cell may hold besides text: phrasing that adds no structure, role or control.
  const PHRASING = new Set(["span", "b", "strong", "i", "em", "small", "code", "abbr", "sub", "sup", "time", "mark",
    "s", "u", "data", "br", "wbr", "bdi", "bdo", "q", "cite", "dfn", "kbd", "samp", "var", "font", "nobr"]);
  // Longer label or description text stays in the snapshot as text (a line shows only 80).
  const LABEL_TEXT_LIMIT = 80;

  // Whether `el` shows in the viewport of its frame (`ctx`), as the budget asks it.
  function shownInView(el, ctx) {
    if (!el || !ctx.inView) return false;
    const rect = TW.boxOf(el);
    return rect.bottom > 0 && rect.right > 0 && rect.top < ctx.win.innerHeight && rect.left < ctx.win.innerWidth &&
      (rect.width > 0 || rect.height > 0);
  }

  // One line of the walk. Whether it is in view is asked only by the budget, and only of a page
  // over it: a box read for each line of every page would cost a small page's read a tenth of
  // its time. The walk and the budget run in one task, so the page is as the walk saw it.
  class Entry {
    constructor(kind, depth, body, el, ctx) {
      this.kind = kind;
      this.depth = depth;
      this.body = body;
      this.el = el;
      this.ctx = ctx;
      this.shown = undefined;
    }

    get inView() {
      if (this.shown === undefined) {
        this.shown = shownInView(this.el, this.ctx);
        this.el = null;
      }
      return this.shown;
    }
  }

  class Walker {
    // `keep`: element -> its { ref, hint } from an earlier snapshot, or null (see takeSnapshot).
    constructor(prefix, dry, textLimit = TEXT_LIMIT, keep = null) {
      this.prefix = prefix;
      this.keep = keep;
      this.dry = dry;
      this.textLimit = textLimit;
      this.entries = []; // Entry: kind ref|landmark|struct|text|frame, depth, body, inView
      this.refs = new Map(); // ref -> { el, frames, doc, hint }
      this.hints = []; // [{ ref, ...hint }] in document order, for the host
      this.count = 0;
      this.level = 0;
      this.depthLimited = false;
      this.labelIds = new Map(); // document -> ids other elements are labelled or described by
      this.maps = new Set(); // image maps whose links are listed already
    }

    // Whether the element is a short label or description another element points at with
    // aria-labelledby or aria-describedby: its text is on that element's line already.
    namesAnother(el, doc) {
      if (!el.id) return false;
      let ids = this.labelIds.get(doc);
      if (!ids) {
        ids = new Set();
        for (const source of doc.querySelectorAll("[aria-labelledby], [aria-describedby]")) {
          for (const attr of ["aria-labelledby", "aria-describedby"]) {
            for (const id of (source.getAttribute(attr) || "").split(/\s+/)) if (id && id !== source.id) ids.add(id);
          }
        }
        this.labelIds.set(doc, ids);
      }
      return ids.has(el.id) && TW.collapse(el.textContent).length <= LABEL_TEXT_LIMIT;
    }

    // A line for `el` of the frame `ctx` (none: a line that is never in view).
    push(kind, depth, body, el = null, ctx = null) {
      this.entries.push(new Entry(kind, depth, body, el, ctx));
    }

    flush(text, depth) {
      if (!text.buf) return;
      const collapsed = TW.collapse(text.buf);
      const source = text.el;
      text.buf = "";
      text.el = null;
      if (!collapsed || text.suppressed) return;
      this.push("text", depth, `text: ${TW.quote(TW.clip(collapsed, this.textLimit))}`, source, text.ctx);
    }

    sourceNodes(parent) {
      if (parent.localName === "slot") {
        const assigned = parent.assignedNodes({ flatten: true });
        return assigned.length ? assigned : parent.childNodes;
      }
      return (parent.shadowRoot || parent).childNodes;
    }

    children(parent, depth, ctx, text) {
      if (this.level >= MAX_DOM_DEPTH) {
        if (!this.depthLimited) this.push("frame", depth, "generic [depth limit]");
        this.depthLimited = true;
        return;
      }
      this.level += 1;
      const onlySummary = parent.localName === "details" && !parent.open;
      for (const node of this.sourceNodes(parent)) {
        if (node.nodeType === 3) {
          if (!text.el) text.el = node.parentElement || parent;
          text.buf += node.data;
        } else if (node.nodeType === 1 && (!onlySummary || node.localName === "summary")) {
          this.element(node, depth, ctx, text);
        }
      }
      this.level -= 1;
    }

    element(el, depth, ctx, text) {
      const tag = el.localName;
      if (TW.isSkippedTag(tag)) return;
      const style = ctx.win.getComputedStyle(el);
      if (TW.isHidden(el, style)) return;
      if (tag === "iframe" || tag === "frame") {
        this.flush(text, depth);
        this.frame(el, depth, ctx);
        return;
      }
      const role = TW.roleOf(el);
      if (TW.isInteractive(el, role, style)) {
        this.flush(text, depth);
        const name = this.refLine(el, role, depth, ctx);
        // A container that is itself actionable (a tree item, a focusable article) lists what
        // it holds; text its name already says is not repeated.
        if (el.shadowRoot || TW.isDescendingRole(role) || TW.hasActionableDescendant(el)) {
          this.block(el, depth + 1, ctx, !el.shadowRoot && !!name && TW.roles.nameFromContent.has(role));
        }
        this.areas(el, depth + 1, ctx);
        return;
      }
      // A sorted column's header is structure too: it is where the table says its order.
      const sorted = TW.isSortedHeader(el, role);
      const structural = sorted || TW.isStructuralRole(role);
      const name = structural ? TW.nameOf(el, role === "heading" || sorted) : "";
      if (structural && (name || !TW.roles.namedOnly.has(role))) {
        this.flush(text, depth);
        const at = this.entries.length;
        const attrs = TW.attributesOf(el, role);
        const description = TW.accessibleDescription(el);
        if (description) attrs.push(`desc=${TW.quote(description)}`);
        // Landmarks survive the budget as refs do: they are the page's map.
        // A widget may move the focus to a heading or a region (out of the tab order): keys go there.
        this.push(TW.isLandmarkRole(role) ? "landmark" : "struct", depth, line(role, name, attrs, null, TW.focusOf(el)),
          el, ctx);
        // A heading's text is its name already: only its controls are listed below it.
        if (role !== "img") this.block(el, depth + 1, ctx, role === "heading" || sorted);
        else this.areas(el, depth + 1, ctx);
        if (!name && this.entries.length === at + 1) this.entries.pop();
        return;
      }
      // A table's rows keep their cells together: which value sits in which column stays
      // readable. A row of plain cells is one line; a row with controls is a line its cells
      // are listed under.
      if (role === "row" && TABLES.has(TW.tableRoleOf(el))) {
        this.flush(text, depth);
        if (!TW.hasActionableDescendant(el) && plainRow(el, ctx)) {
          this.row(el, depth, ctx);
          return;
        }
        this.push("struct", depth, "row", el, ctx);
        this.cells(el, depth + 1, ctx);
        return;
      }
      // A label's text is its control's name already, as a legend's or a caption's is its
      // group's or table's: only what it wraps is listed.
      if ((tag === "label" && el.control) || CAPTIONS.has(tag) || this.namesAnother(el, ctx.doc)) {
        this.flush(text, depth);
        this.block(el, depth, ctx, true);
        return;
      }
      // Anything else is spliced through; a block boundary ends the current text run. An image
      // without a name of its own (alt="") still shows its map's links, as in Chromium.
      const block = !style.display.startsWith("inline") && style.display !== "contents";
      if (block) this.flush(text, depth);
      if (tag === "img") {
        this.flush(text, depth);
        this.areas(el, depth, ctx);
      }
      this.children(el, depth, ctx, text);
      if (block) this.flush(text, depth);
    }

    // The ref line of an actionable element; returns its name. Role and name are computed as a
    // write's check computes them to see the element is still what was read.
    refLine(el, role, depth, ctx) {
      const { name } = TW.roleAndName(el, role);
      const ref = this.addRef(el, ctx, role, name);
      const attrs = TW.attributesOf(el, role);
      const description = TW.accessibleDescription(el);
      if (description) attrs.push(`desc=${TW.quote(description)}`);
      const leads = elsewhere(this.lastHint, ctx);
      if (leads) attrs.push(leads);
      this.push("ref", depth, line(role, name, attrs, ref, TW.focusOf(el)), el, ctx);
      return name;
    }

    // The links of an image map, under the image that uses it (the first one shown, once: the
    // map's areas are hidden where the map itself stands). Each gets a ref and its destination
    // as any link does.
    areas(img, depth, ctx) {
      const map = TW.usedMap(img);
      if (!map || this.maps.has(map)) return;
      this.maps.add(map);
      for (const area of TW.linkAreas(map)) this.refLine(area, TW.roleOf(area), depth, ctx);
    }

    // One line for a row of plain cells, in order, empty ones kept, so columns line up.
    row(el, depth, ctx) {
      const cells = [];
      for (const cell of el.children) {
        if (!CELL_ROLES.has(TW.roleOf(cell)) || TW.isHidden(cell, ctx.win.getComputedStyle(cell))) continue;
        cells.push(TW.clip(TW.collapse(TW.nameOf(cell, true)), CELL_LIMIT));
      }
      if (cells.some(Boolean)) this.push("text", depth, `row: ${TW.quote(TW.clip(cells.join(" | "), ROW_LIMIT))}`, el, ctx);
    }

    // The cells of a row with controls, each listed as usual; an empty cell is a bare line, so
    // that the cells after it keep their column (the weekday of a date picker's first day).
    cells(el, depth, ctx) {
      for (const node of el.children) {
        const at = this.entries.length;
        const role = TW.roleOf(node);
        // A header cell says which column (or row) it heads, whether or not it holds a control
        // (a sort button); a sorted one says so itself.
        const style = ctx.win.getComputedStyle(node);
        if (HEADER_ROLES.has(role) && !TW.isSortedHeader(node, role) && !TW.isHidden(node, style) && !TW.isInteractive(node, role, style)) {
          const name = TW.nameOf(node, true);
          if (name) {
            this.push("struct", depth, line(role, name, TW.attributesOf(node, role), null, TW.focusOf(node)), node, ctx);
            this.block(node, depth + 1, ctx, true);
            continue;
          }
        }
        const text = { buf: "", el: null, ctx, suppressed: false };
        this.element(node, depth, ctx, text);
        this.flush(text, depth);
        if (this.entries.length === at && CELL_ROLES.has(role) && !TW.isHidden(node, style)) {
          this.push("struct", depth, role, node, ctx);
        }
      }
    }

    block(el, depth, ctx, suppressText) {
      const text = { buf: "", el: null, ctx, suppressed: suppressText };
      this.children(el, depth, ctx, text);
      this.flush(text, depth);
    }

    frame(el, depth, ctx) {
      const label = TW.clip(TW.collapse(el.getAttribute("title") || el.getAttribute("aria-label") || el.getAttribute("src") || ""), 80);
      const head = label ? `iframe ${TW.quote(label)}` : "iframe";
      if (ctx.frames.length >= MAX_FRAME_DEPTH) {
        this.push("frame", depth, `${head} [depth limit]`);
        return;
      }
      let doc = null;
      try {
        doc = el.contentDocument;
      } catch (_) {
        doc = null;
      }
      // The extension may be able to reach into a cross-origin frame it has site access for,
      // but the call is judged by the tab's origin: another origin's frame stays a blind spot.
      if (!doc || !doc.defaultView || !TW.sameOriginAsTop(doc)) {
        this.push("frame", depth, `${head} [cross-origin, not visible]`, el, ctx);
        return;
      }
      this.push("frame", depth, head, el, ctx);
      const inner = { doc, win: doc.defaultView, frames: [...ctx.frames, { frame: el, doc }], inView: shownInView(el, ctx) };
      const root = doc.body || doc.documentElement;
      if (root) this.block(root, depth + 1, inner, false);
    }

    addRef(el, ctx, role, name) {
      this.count += 1;
      const hint = TW.hintOf(el, role, name);
      // An element a snapshot already named, unchanged in role and name, keeps its ref.
      const kept = this.keep ? this.keep(el) : null;
      const ref = kept && !this.refs.has(kept.ref) && TW.sameHint(kept.hint, hint) ? kept.ref : `${this.prefix}${this.count}`;
      this.lastHint = hint;
      if (!this.dry) {
        this.refs.set(ref, { el, frames: ctx.frames, doc: ctx.doc, hint });
        this.hints.push({ ref, ...hint });
      }
      return ref;
    }
  }

  // A row whose cells hold short text only (no structure, no frame, no clickable look, no sort
  // state, nothing longer than a cell line shows): the one-line form says all of it.
  function plainRow(row, ctx) {
    for (const cell of row.children) {
      if (!CELL_ROLES.has(TW.roleOf(cell)) || cell.shadowRoot || TW.isSortedHeader(cell, TW.roleOf(cell))) return false;
      if (TW.collapse(cell.textContent).length > CELL_LIMIT) return false;
      if (ctx.win.getComputedStyle(cell).cursor === "pointer") return false;
      for (const inner of cell.querySelectorAll("*")) {
        if (!PHRASING.has(inner.localName) || inner.hasAttribute("role") || inner.shadowRoot) return false;
        if (ctx.win.getComputedStyle(inner).cursor === "pointer") return false;
      }
    }
    return true;
  }

  const MAX_SHOWN_URL = 100;

  // The destination shown on a ref line when it leaves the frame's origin, so the model sees
  // where a click or a form would take the page: `to <url>`, `posts to <url>`, `opens <url>`.
  function elsewhere(hint, ctx) {
    const to = hint && hint.destination;
    if (!to || sameOrigin(to.url, ctx)) return "";
    const url = to.url.length > MAX_SHOWN_URL ? `${to.url.slice(0, MAX_SHOWN_URL - 1)}…` : to.url;
    if (to.newTab) return `opens ${url}`;
    return to.method === "POST" ? `posts to ${url}` : `to ${url}`;
  }

  // Whether `url` (absolute, as the browser serialises it) is of the frame's origin. Most links of
  // a page are, and such a URL is the origin followed by its path, query or fragment: told without
  // parsing it. The frame's origin is read once per walk (a location is slow to read from here).
  function sameOrigin(url, ctx) {
    if (ctx.origin === undefined) ctx.origin = ctx.win.location.origin;
    const origin = ctx.origin;
    if (origin !== "null" && url.startsWith(origin) && (url.length === origin.length || "/?#".includes(url[origin.length]))) {
      return true;
    }
    try {
      return new URL(url).origin === origin;
    } catch (_) {
      return origin === "null"; // an address that does not parse has no origin of its own
    }
  }

  // `focus` goes after the ref: it moves with every action, the element's own states do not.
  function line(role, name, attrs, ref, focus = "") {
    let text = role;
    if (name) text += ` ${TW.quote(name)}`;
    for (const attr of attrs) text += ` [${attr}]`;
    if (ref) text += ` [ref=${ref}]`;
    if (focus) text += ` [${focus}]`;
    return text;
  }

  function render(entry) {
    return `${"  ".repeat(entry.depth)}- ${entry.body}`;
  }

  // The entries that hold a ref, landmark, frame or kept new line (their ancestors): without
  // them those lines would read as nested under whatever line came before (a grid's cells under
  // a button). Kept new lines are held themselves.
  function holders(entries, fresh) {
    const holds = new Uint8Array(entries.length);
    const chain = [];
    for (let i = 0; i < entries.length; i++) {
      const depth = entries[i].depth;
      while (chain.length && entries[chain[chain.length - 1]].depth >= depth) chain.pop();
      const isNew = fresh && fresh[i];
      if (isNew) holds[i] = 1;
      if (isNew || (entries[i].kind !== "text" && entries[i].kind !== "struct")) for (const at of chain) holds[at] = 1;
      chain.push(i);
    }
    return holds;
  }

  // Which entries render to a line the snapshot before did not have (null when none is kept:
  // too many are new, or there is no snapshot of this document to compare with).
  function newSince(entries, before) {
    if (!before) return null;
    const seen = new Set(before.lines);
    const fresh = new Uint8Array(entries.length);
    let count = 0;
    for (let i = 0; i < entries.length; i++) {
      if (seen.has(render(entries[i]))) continue;
      fresh[i] = 1;
      if (++count > MAX_NEW_KEPT) return null;
    }
    return count ? fresh : null;
  }

  const BARE_ROLE = /^[a-z]+$/;

  // Unnamed structure whose every line the budget dropped says nothing any more (a bare "row"
  // or "listitem"): it goes too, inner first. Returns how many went.
  function dropEmptied(entries, dropped) {
    let count = 0;
    for (let i = entries.length - 2; i >= 0; i--) {
      const entry = entries[i];
      if (dropped[i] || entry.kind !== "struct" || !BARE_ROLE.test(entry.body) || entries[i + 1].depth <= entry.depth) continue;
      let j = i + 1;
      while (j < entries.length && entries[j].depth > entry.depth && dropped[j]) j++;
      if (j === entries.length || entries[j].depth <= entry.depth) {
        dropped[i] = 1;
        count += 1;
      }
    }
    return count;
  }

  // Fit the entries into `budget` characters. Dropped first: off-screen text, off-screen
  // structure, on-screen text, on-screen structure (each from the end of the page); structure
  // that holds what stays is kept. Ref, landmark and frame lines stay, except off-screen ref
  // lines far past the budget. Returns the kept lines and what was dropped.
  function fit(entries, budget, fresh = null) {
    const costs = entries.map((entry) => entry.depth * 2 + entry.body.length + 3);
    let total = costs.reduce((sum, cost) => sum + cost, 0);
    const dropped = new Uint8Array(entries.length);
    const holds = total > budget ? holders(entries, fresh) : dropped;
    let nodes = 0;
    let refs = 0;
    const passes = [["text", false], ["struct", false], ["text", true], ["struct", true]];
    for (const [kind, inView] of passes) {
      if (total <= budget) break;
      for (let i = entries.length - 1; i >= 0 && total > budget; i--) {
        const entry = entries[i];
        if (entry.kind === kind && entry.inView === inView && !dropped[i] && !holds[i]) {
          dropped[i] = 1;
          total -= costs[i];
          nodes += 1;
        }
      }
    }
    const ceiling = budget + REF_OVERFLOW_CHARS;
    for (let i = entries.length - 1; i >= 0 && total > ceiling; i--) {
      if (entries[i].kind === "ref" && !entries[i].inView && !dropped[i] && !(fresh && fresh[i])) {
        dropped[i] = 1;
        total -= costs[i];
        nodes += 1;
        refs += 1;
      }
    }
    if (nodes) nodes += dropEmptied(entries, dropped);
    const lines = [];
    const hidden = [];
    for (let i = 0; i < entries.length; i++) {
      if (!dropped[i]) lines.push(render(entries[i]));
      else if (hidden.length < MAX_HIDDEN_HASHES) hidden.push(lineHash(render(entries[i])));
    }
    return { lines, nodes, refs, hidden };
  }

  // What the host's diff knows a line by, whatever its ref's generation and focus marks (the
  // same normal form and hash as host/browser/diff.py): FNV-1a over the UTF-8 bytes, base 36.
  const REF_MARK = /\[ref=s[0-9a-z]+_\d+_\d+\](?: \[(?:focused|active)\])?/g;
  const utf8 = new TextEncoder();
  function lineHash(line) {
    let hash = 0x811c9dc5;
    for (const byte of utf8.encode(line.replace(REF_MARK, "[ref]"))) hash = Math.imul(hash ^ byte, 0x01000193);
    return (hash >>> 0).toString(36);
  }

  function truncationMarker(nodes, refs) {
    if (!nodes) return "";
    if (!refs) return `[truncated: ${nodes} nodes]`;
    return `[truncated: ${nodes} nodes, ${refs} of them with refs; find_in_page searches the whole snapshot]`;
  }

  function header(id) {
    const title = TW.clip(TW.collapse(document.title), 200);
    return [`# Page Snapshot (${id})`, `URL: ${location.href}`, `Title: ${title}`, ""];
  }

  // Walk the page. `dry` only counts refs (the batch probe) and leaves the ref map alone.
  function walk(token, snapshotId, dry, textLimit = TEXT_LIMIT, keep = null) {
    const walker = new Walker(`s${token}_${snapshotId}_`, dry, textLimit, keep);
    const ctx = { doc: document, win: window, frames: [], inView: true };
    const root = document.body || document.documentElement;
    if (root) walker.block(root, 0, ctx, false);
    return walker;
  }

  TW.countRefs = () => walk(TW.documentToken(), 0, true).count;

  function retire(previous) {
    if (!previous) return;
    const prior = TW.state.priorHints;
    const earlier = TW.state.earlierRefs;
    for (const [ref, entry] of previous.refs) {
      prior.delete(ref);
      prior.set(ref, { hint: entry.hint, token: previous.token, doc: entry.doc, frames: entry.frames });
      earlier.set(entry.el, { ref, hint: entry.hint, token: previous.token });
    }
    while (prior.size > MAX_PRIOR_HINTS) prior.delete(prior.keys().next().value);
  }

  // Whether the page changed since the current snapshot (trusted input reads the page again
  // for its answer only then): the first change of the page's own, not of our overlay or
  // indicator, sets it, and the watch ends there.
  let watching = null;
  const ours = (node) => TW.isOverlayNode(node);
  const pagesOwn = (record) => !ours(record.target)
    && !(record.type === "childList" && [...record.addedNodes, ...record.removedNodes].every(ours));

  function watchForChange() {
    if (watching) watching.disconnect();
    TW.state.changedSinceSnapshot = false;
    const observer = new MutationObserver((records) => {
      if (!records.some(pagesOwn)) return;
      TW.state.changedSinceSnapshot = true;
      observer.disconnect();
      if (watching === observer) watching = null;
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    watching = observer;
  }

  // Take a snapshot and make it the current one (every earlier ref becomes a prior hint).
  // `full`: text runs whole (up to FULL_TEXT_LIMIT characters each), not cut at 120.
  // The elements the current snapshot has refs for keep them while their role and name stay
  // (refs an agent holds stay good across reads and writes; a changed element gets a new one),
  // and so do elements an earlier snapshot named that come back (the page behind a popover that
  // hid it from the tree): an agent's ref to them acts again as it is.
  // `keepNew` (a write's snapshot): the lines new since the snapshot before stay within the
  // budget, so a write's answer shows its effect even on a page larger than the budget.
  TW.takeSnapshot = ({ maxTokens = 3000, full = false, keepNew = false } = {}) => {
    const token = TW.documentToken();
    const snapshotId = ++TW.state.snapshotCounter;
    const current = TW.state.snapshot;
    // The current snapshot's refs join the earlier ones first: one lookup serves both.
    retire(current);
    const earlier = TW.state.earlierRefs;
    const keep = (el) => {
      const found = earlier.get(el);
      return found && found.token === token ? found : null;
    };
    const walker = TW.duringWalk(() => walk(token, snapshotId, false, full ? FULL_TEXT_LIMIT : TEXT_LIMIT, keep));
    const id = `s${token}_${snapshotId}`;
    const all = walker.entries.map(render);
    const before = keepNew && current && current.token === token ? current : null;
    const { lines, nodes, refs, hidden } = fit(walker.entries, maxTokens * 4, newSince(walker.entries, before));
    const marker = truncationMarker(nodes, refs);
    const head = header(id);
    const text = head.concat(lines).join("\n") + (marker ? `\n\n${marker}` : "");
    TW.state.snapshot = { id, token, snapshotId, refs: walker.refs, lines: head.concat(all) };
    watchForChange();
    return {
      id, token, snapshotId, text,
      refs: walker.hints,
      refCount: walker.count,
      truncatedNodes: nodes,
      truncatedRefs: refs,
      hidden,
    };
  };

  // The wire form of a snapshot for the host (text plus the ref hints it keeps, and the hashes
  // of the lines the budget left out: the next diff does not take them for added or removed).
  TW.snapshotForHost = (snap) => ({
    id: snap.id, docToken: snap.token, snapshotId: snap.snapshotId, text: snap.text, refs: snap.refs,
    refCount: snap.refCount, truncatedNodes: snap.truncatedNodes, truncatedRefs: snap.truncatedRefs, hidden: snap.hidden,
  });
})();
