// Tabwarden page executor, part 9: the read tools, by name (each declared in host/tools/catalog.py
// with the page executor as its runner's other half).
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("reading")) return;
  TW.parts.add("reading");
  const CODES = TW.codes;

  const ARTICLE_LIMIT = 12000;
  const EXTRACT_LIMIT = 200000;
  const FIND_LIMIT = 20;
  const WAIT_POLL_MS = 200;
  const CHROME_TAGS = "script, style, noscript, nav, footer, iframe, frame, svg, header, aside, template";

  TW.reads = {};

  function bodyIsBlank() {
    return !document.body || !TW.collapse(document.body.innerText);
  }

  function contentRoot() {
    return document.querySelector("article") || document.querySelector("main") || document.body || document.documentElement;
  }

  function cleanClone(root) {
    const clone = root.cloneNode(true);
    for (const el of clone.querySelectorAll(CHROME_TAGS)) el.remove();
    return clone;
  }

  TW.reads.read_page = async (params) => {
    if (params.mode === "article") {
      const text = (cleanClone(contentRoot()).textContent || "").replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
      const clipped = text.length > ARTICLE_LIMIT ? `${text.slice(0, ARTICLE_LIMIT)}\n[text truncated]` : text;
      return { resultText: `# ${TW.clip(TW.collapse(document.title), 200)}\nURL: ${location.href}\n\n${clipped}` };
    }
    const snap = TW.takeSnapshot({ maxTokens: params.maxTokens ?? 3000, full: params.mode === "full" });
    if (snap.refCount === 0 && bodyIsBlank()) {
      throw TW.fail(CODES.EMPTY_TREE, "EMPTY_TREE: the page has no readable content or controls (canvas, plugin or still loading); try read_page_deep or a screenshot", "execute", true);
    }
    return { resultText: snap.text, snapshot: TW.snapshotForHost(snap) };
  };

  TW.reads.find_in_page = async (params) => {
    let taken = null;
    if (!TW.state.snapshot) taken = TW.takeSnapshot({ maxTokens: 3000 });
    const needle = params.query.toLowerCase();
    const hits = TW.state.snapshot.lines.filter((line) => line.toLowerCase().includes(needle));
    const shown = hits.slice(0, FIND_LIMIT).map((line) => line.trim());
    let text;
    if (!hits.length) {
      text = `No line of the current snapshot (${TW.state.snapshot.id}) contains ${TW.quote(params.query)}. Scroll, or call read_page if the page changed.`;
    } else {
      text = `${hits.length} line(s) matched in snapshot ${TW.state.snapshot.id}${hits.length > FIND_LIMIT ? ` (first ${FIND_LIMIT} shown)` : ""}:\n${shown.join("\n")}`;
    }
    const result = { resultText: text };
    if (taken) result.snapshot = TW.snapshotForHost(taken);
    return result;
  };

  // ---- Markdown

  const BLOCK_TAGS = new Set(["p", "div", "section", "article", "ul", "ol", "table", "tr", "blockquote", "pre", "main", "form", "dl", "figure", "details"]);

  function markdown(node, out) {
    if (node.nodeType === 3) {
      out.push(node.data.replace(/\s+/g, " "));
      return;
    }
    if (node.nodeType !== 1) return;
    const tag = node.localName;
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      out.push(`\n\n${"#".repeat(Number(heading[1]))} ${TW.collapse(node.textContent)}\n\n`);
      return;
    }
    if (tag === "br") {
      out.push("\n");
      return;
    }
    if (tag === "a" && node.hasAttribute("href")) {
      const text = TW.collapse(node.textContent);
      const href = node.getAttribute("href").trim();
      if (/^javascript:/i.test(href) || !text) {
        out.push(text);
        return;
      }
      let absolute = href;
      try {
        absolute = new URL(href, node.ownerDocument.baseURI).href;
      } catch (_) {
        // keep the raw href
      }
      out.push(`[${text}](${absolute})`);
      return;
    }
    if (tag === "li") out.push("\n- ");
    const block = BLOCK_TAGS.has(tag);
    if (block) out.push("\n\n");
    for (const child of node.childNodes) markdown(child, out);
    if (block) out.push("\n\n");
  }

  function toMarkdown(root) {
    const out = [];
    markdown(cleanClone(root), out);
    return out.join("").replace(/[ \t]+\n/g, "\n").replace(/\n[ \t]+/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
  }

  TW.reads.extract = async (params) => {
    const root = params.scope ? TW.resolveRef(params.scope).el : contentRoot();
    let body = toMarkdown(root);
    let truncated = false;
    if (body.length > EXTRACT_LIMIT) {
      body = body.slice(0, EXTRACT_LIMIT);
      truncated = true;
    }
    const text = `# ${TW.clip(TW.collapse(document.title), 200)}\nURL: ${location.href}\n\n${body}${truncated ? `\n[content truncated at ${EXTRACT_LIMIT} characters]` : ""}`;
    return { resultText: text, extracted: { chars: text.length, truncated } };
  };

  TW.reads.get_selection = async () => {
    let text = String(window.getSelection() || "");
    const active = document.activeElement;
    if (!text && active && (active.localName === "textarea" || TW.isTextInput(active)) && !TW.isCredentialField(active)) {
      const { selectionStart: from, selectionEnd: to } = active;
      if (typeof from === "number" && to > from) text = active.value.slice(from, to);
    }
    if (!text.trim()) return { resultText: "No text is selected." };
    const clipped = text.length > 20000 ? `${text.slice(0, 20000)}\n[selection truncated]` : text;
    return { resultText: `Selected text (${text.length} characters):\n${clipped}` };
  };

  // ---- scroll

  TW.reads.scroll = async (params, request) => {
    let scroller = document.scrollingElement || document.documentElement;
    let what = "the page";
    let view = { width: window.innerWidth, height: window.innerHeight };
    if (params.target) {
      const target = TW.resolveRef(params.target);
      scroller = target.el;
      what = `${target.hint.role} [ref=${target.ref}]`;
      view = { width: scroller.clientWidth || view.width, height: scroller.clientHeight || view.height };
    }
    const vertical = params.direction === "up" || params.direction === "down";
    const sign = params.direction === "up" || params.direction === "left" ? -1 : 1;
    const beforeX = scroller.scrollLeft;
    const beforeY = scroller.scrollTop;
    const amount = params.amount ?? "page";
    if (amount === "end") {
      const edge = sign > 0 ? (vertical ? scroller.scrollHeight : scroller.scrollWidth) : 0;
      if (vertical) scroller.scrollTop = edge;
      else scroller.scrollLeft = edge;
    } else {
      const px = amount === "page" ? Math.round((vertical ? view.height : view.width) * 0.9) : amount;
      scroller.scrollBy({ left: vertical ? 0 : sign * px, top: vertical ? sign * px : 0, behavior: "instant" });
    }
    const moved = scroller.scrollLeft !== beforeX || scroller.scrollTop !== beforeY;
    const hidden = document.visibilityState === "hidden";
    if (moved && hidden) {
      // A hidden page renders nothing, and the browser fires its scroll events as it renders:
      // the page's handlers (a list that loads more near its end) would never hear of it.
      const whole = scroller === document.scrollingElement || scroller === document.documentElement;
      (whole ? document : scroller).dispatchEvent(new Event("scroll", { bubbles: whole }));
    }
    await TW.sleep(50, request.signal);
    const position = `scroll position x=${Math.round(scroller.scrollLeft)} y=${Math.round(scroller.scrollTop)} of ${scroller.scrollWidth}x${scroller.scrollHeight}`;
    const note = moved && hidden ? " The tab is in the background, where the browser draws nothing: its scroll handlers were " +
      "told, but content that loads as it comes into view waits until the tab is shown (tab_focus)." : "";
    return {
      resultText: (moved ? `Scrolled ${what} ${params.direction}; ${position}.` : `Scrolling ${what} ${params.direction} moved nothing (already at the edge); ${position}.`) + note,
      scroll: { x: scroller.scrollLeft, y: scroller.scrollTop, moved },
    };
  };

  // ---- wait_for

  function pageText() {
    return document.body ? document.body.innerText : "";
  }

  TW.reads.wait_for = async (params, request) => {
    if (params.text === undefined && params.textGone === undefined) {
      await TW.sleep(params.timeMs ?? 0, request.signal);
      return { resultText: `Waited ${params.timeMs ?? 0} ms.` };
    }
    const gone = typeof params.textGone === "string" ? params.textGone : params.textGone ? params.text : null;
    const wanted = gone === null ? params.text : gone;
    const limit = Math.min(params.timeMs ?? 30000, 30000);
    const until = Math.min(Date.now() + limit, request.deadlineAt - 300);
    const started = Date.now();
    for (;;) {
      const present = pageText().includes(wanted);
      if (gone === null ? present : !present) {
        const verb = gone === null ? "appeared" : "disappeared";
        return { resultText: `Text ${TW.quote(TW.clip(wanted, 100))} ${verb} after ${Date.now() - started} ms.` };
      }
      if (Date.now() >= until) {
        const verb = gone === null ? "appear" : "disappear";
        throw TW.fail(CODES.TIMEOUT, `text ${TW.quote(TW.clip(wanted, 100))} did not ${verb} within ${limit} ms`, "settle", true);
      }
      await TW.sleep(Math.min(WAIT_POLL_MS, Math.max(0, until - Date.now())), request.signal);
    }
  };
})();
