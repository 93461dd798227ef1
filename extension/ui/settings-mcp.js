// Settings: MCP servers — each configured server with its connection state, its tools as the model
// sees them and whether a bearer token is stored (never the token); add, edit and remove servers
// (the host validates each change as it validates mcp.json and writes it), set or clear tokens,
// connect now. The host sends every page the new `mcp.state` after any change (also the REPL's and
// after a background connect), so this view only draws what the host sent.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

// A refusal names the bad field's path (`... - at `$.servers.<id>.url``, or `$.url` for the op's own
// checks); these are the form fields the paths point at.
const FIELDS = { server: "id", servers: "id", url: "url", enabled: "enabled", tools: "tools", timeoutSeconds: "timeout" };

function fieldsIn(message) {
  const found = new Set();
  for (const [, path] of (message || "").matchAll(/ - at `([^`]+)`/g)) {
    const inFile = /^\$\.servers(?:\.[^.`[]+\.(\w+))?/.exec(path);
    const name = inFile ? (inFile[1] || "servers") : (/^\$\.(\w+)/.exec(path) || [])[1];
    if (FIELDS[name]) found.add(FIELDS[name]);
  }
  return found;
}

// A server's own title for a tool (without one, the label is just a name again).
const titled = (tool) => tool.label && tool.label !== tool.tool && tool.label !== tool.name;

// The URL with its origin in bold: the origin is what permission rules and grants key on.
function urlView(server) {
  const rest = server.url.startsWith(server.origin) ? server.url.slice(server.origin.length) : null;
  return rest === null
    ? h("code", { class: "mcp-url" }, server.url, " (", h("strong", { text: server.origin }), ")")
    : h("code", { class: "mcp-url" }, h("strong", { text: server.origin }), rest);
}

export class McpSection {
  constructor(root, context) {
    this.root = root;
    this.context = context;
    this.client = context.client;
    this.state = null; // the last mcp.state
    this.editing = null; // the server id being edited, or null when adding
    this.connecting = new Set(); // servers whose Connect is running
    this.confirming = null; // the server whose removal is being asked about
    this.openTools = new Set(); // servers whose tool list is unfolded (kept across redraws)
    this.typedTokens = new Map(); // server id -> typed, unsaved token (kept across redraws)
    this.configError = h("div", { class: "problems", role: "alert" });
    this.list = h("div", { class: "mcp-servers" });
    this.status = h("p", { class: "status small", role: "status" });
    this.formTitle = h("h3", { id: "mcp-form-title" });
    const field = (el) => { el.addEventListener("input", () => this.mark(null)); return el; };
    this.f = {
      id: field(h("input", { id: "mcp-id", required: true, autocomplete: "off", maxLength: 64, "aria-describedby": "mcp-id-hint mcp-error" })),
      url: field(h("input", { id: "mcp-url", required: true, autocomplete: "off", inputmode: "url", placeholder: "https://mcp.example.com/mcp", "aria-describedby": "mcp-error" })),
      enabled: field(h("input", { id: "mcp-enabled", type: "checkbox", checked: true })),
      tools: field(h("textarea", { id: "mcp-tools", rows: 3, autocomplete: "off", "aria-describedby": "mcp-error" })),
      timeout: field(h("input", { id: "mcp-timeout", type: "number", min: "0", step: "any", placeholder: "60", "aria-describedby": "mcp-error" })),
      elicitation: field(h("input", { id: "mcp-elicitation", type: "checkbox" })),
      sampling: field(h("input", { id: "mcp-sampling", type: "checkbox" })),
    };
    this.error = h("p", { id: "mcp-error", class: "bad small", role: "alert" });
    this.submit = h("button", { type: "submit", class: "primary" });
    this.cancel = h("button", { type: "button", text: t("settings.mcp.cancel"), onclick: () => this.reset() });
    this.formStatus = h("p", { class: "status small", role: "status" });
    const f = this.f;
    root.setAttribute("aria-busy", "true");
    root.append(
      h("p", { class: "muted small", text: t("settings.mcp.help") }),
      h("p", { class: "note small", id: "mcp-judged", text: t("settings.mcp.judged") }),
      this.configError, this.list, this.status,
      // The host is the judge of every field (it checks them as it checks mcp.json): no browser checks.
      h("form", { class: "mcp-form", novalidate: true, "aria-labelledby": "mcp-form-title", onsubmit: (event) => this.save(event) },
        this.formTitle,
        h("label", {}, t("settings.mcp.id"), f.id, h("span", { id: "mcp-id-hint", class: "muted small", text: t("settings.mcp.idHint") })),
        h("label", {}, t("settings.mcp.url"), f.url),
        h("label", { class: "row" }, f.enabled, t("settings.mcp.enabled")),
        h("label", {}, t("settings.mcp.allow"), f.tools),
        h("label", {}, t("settings.mcp.timeoutLabel"), f.timeout),
        h("label", { class: "row" }, f.elicitation, t("settings.mcp.elicitation")),
        h("label", { class: "row" }, f.sampling, t("settings.mcp.sampling")),
        this.error,
        h("div", { class: "row" }, this.submit, this.cancel)),
      this.formStatus);
    this.reset();
    this.client.on("mcp.state", (m) => this.show(m));
    this.client.on("initialized", () => this.load()); // again after a reconnect: the host may have changed
  }

  async load() {
    const reply = await this.client.send({ type: "mcp.get" });
    if (reply.type !== "mcp.state") this.say(t("settings.refused", { message: reply.message }), true);
  }

  say(text, bad = false) {
    this.status.textContent = text;
    this.status.classList.toggle("bad", bad);
  }

  // -- the list --------------------------------------------------------------------------------

  show(state) {
    this.state = state;
    this.root.setAttribute("aria-busy", "false");
    const servers = state.servers || []; // the host omits an empty list
    const ids = new Set(servers.map((s) => s.id));
    for (const set of [this.openTools, this.connecting]) for (const id of set) if (!ids.has(id)) set.delete(id);
    for (const id of this.typedTokens.keys()) if (!ids.has(id)) this.typedTokens.delete(id);
    if (this.confirming !== null && !ids.has(this.confirming)) this.confirming = null;
    clear(this.configError);
    if (state.configError) this.configError.append(h("p", { text: t("settings.mcp.configError", { message: state.configError }) }));
    // Redrawn whole; the focused control is found again by its id.
    const focused = this.list.contains(document.activeElement) ? document.activeElement.id : null;
    clear(this.list);
    if (!servers.length) this.list.append(h("p", { class: "muted", text: t("settings.mcp.empty") }));
    for (const server of servers) this.list.append(this.card(server));
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
    if (this.editing !== null && !ids.has(this.editing)) this.detach();
  }

  card(server) {
    const id = server.id;
    const tools = server.tools || [];
    const skipped = server.skipped || [];
    const facts = [
      tools.length === 1 ? t("settings.mcp.toolsOne") : t("settings.mcp.tools", { count: tools.length }),
      t(`settings.mcp.token.${server.token}`, { env: server.bearerTokenEnv }),
      server.allowList ? t("settings.mcp.allowList", { tools: server.allowList.join(", ") }) : null,
      t("settings.mcp.timeout", { seconds: server.timeoutSeconds }),
      server.elicitation ? t("settings.mcp.asks") : null,
      server.sampling ? t("settings.mcp.samples") : null,
      server.headerNames && server.headerNames.length ? t("settings.mcp.headers", { names: server.headerNames.join(", ") }) : null,
    ].filter(Boolean);
    const details = h("details", { class: "mcp-tools", open: this.openTools.has(id) },
      h("summary", { id: `mcp-tools-${id}`, text: t("settings.mcp.toolList", { count: tools.length }) }),
      tools.length || skipped.length
        ? h("ul", {},
          tools.map((tool) => h("li", {}, h("code", { text: tool.name }), titled(tool) ? ` — ${tool.label}` : null,
            tool.changed ? h("strong", { class: "mcp-changed", text: ` — ${t("settings.mcp.changed")}` }) : null)),
          skipped.map((s) => h("li", { class: "muted", text: t("settings.mcp.skipped", { tool: s.tool, reason: s.reason }) })))
        : h("p", { class: "muted small", text: t("settings.mcp.toolListEmpty") }));
    details.addEventListener("toggle", () => { if (details.open) this.openTools.add(id); else this.openTools.delete(id); });
    const busy = this.connecting.has(id);
    const token = h("input", { id: `mcp-token-${id}`, type: "password", autocomplete: "off", value: this.typedTokens.get(id) || "",
      "aria-label": t("settings.mcp.tokenFor", { server: id }), oninput: () => this.typedTokens.set(id, token.value) });
    return h("article", { class: "mcp-server", dataset: { server: id, state: server.state }, "aria-labelledby": `mcp-name-${id}` },
      h("div", { class: "row mcp-head" },
        h("h3", { id: `mcp-name-${id}`, text: id }),
        h("span", { class: `mcp-state mcp-state-${server.state}`, text: t(`settings.mcp.state.${server.state}`) })),
      urlView(server),
      h("p", { class: "small muted mcp-facts", text: facts.join(" · ") }),
      server.lastError ? h("p", { class: "small bad mcp-error", text: t("settings.mcp.error", server.lastError) }) : null,
      details,
      h("div", { class: "row mcp-actions" },
        h("button", { type: "button", id: `mcp-connect-${id}`, disabled: busy || !server.enabled,
          text: busy ? t("settings.mcp.connecting") : t("settings.mcp.connect"),
          "aria-label": busy ? null : t("settings.mcp.connectServer", { server: id }), onclick: () => this.connect(id) }),
        h("button", { type: "button", id: `mcp-edit-${id}`, text: t("settings.mcp.edit"),
          "aria-label": t("settings.mcp.editServer", { server: id }), onclick: () => this.edit(server) }),
        h("button", { type: "button", id: `mcp-remove-${id}`, class: "danger", text: t("settings.mcp.remove"),
          "aria-label": t("settings.mcp.removeServer", { server: id }), onclick: () => this.askRemove(id) }),
        h("button", { type: "button", id: `mcp-rule-${id}`, class: "link small", text: t("settings.mcp.ruleHint"),
          "aria-label": t("settings.mcp.ruleHintServer", { server: id }),
          onclick: () => this.context.prefillRule(`mcp__${id}__*`, server.origin, "allow") })),
      this.confirming === id ? this.confirmBox(id) : null,
      h("form", { class: "row mcp-token", onsubmit: (event) => { event.preventDefault(); this.setToken(id, token.value); } },
        h("label", { for: token.id, class: "small", text: t("settings.mcp.tokenLabel") }), token,
        h("button", { type: "submit", id: `mcp-token-save-${id}`, text: t("settings.mcp.tokenSave") }),
        h("button", { type: "button", id: `mcp-token-clear-${id}`, text: t("settings.mcp.tokenClear"),
          disabled: server.token !== "stored", onclick: () => this.setToken(id, null) })));
  }

  confirmBox(id) {
    const question = h("p", { id: `mcp-confirm-${id}`, text: t("settings.mcp.removeQuestion", { server: id }) });
    return h("div", { class: "confirm", role: "group", "aria-labelledby": question.id }, question,
      h("div", { class: "row" },
        h("button", { type: "button", id: `mcp-remove-yes-${id}`, class: "danger", text: t("settings.mcp.removeConfirm"), onclick: () => this.remove(id) }),
        h("button", { type: "button", id: `mcp-remove-keep-${id}`, text: t("settings.mcp.removeKeep"), onclick: () => this.askRemove(null, id) })));
  }

  redraw() {
    if (this.state) this.show(this.state);
  }

  // -- actions on a server ---------------------------------------------------------------------

  async connect(id) {
    this.connecting.add(id);
    this.redraw();
    document.getElementById(`mcp-connect-${id}`)?.focus();
    const reply = await this.client.send({ type: "mcp.refresh", server: id });
    this.connecting.delete(id);
    if (reply.type !== "mcp.state") this.say(t("settings.refused", { message: reply.message }), true);
    this.redraw();
  }

  // Removing takes two steps: the button asks, "Keep it" comes back to where it was.
  askRemove(id, back = null) {
    this.confirming = id;
    this.redraw();
    document.getElementById(id !== null ? `mcp-remove-keep-${id}` : `mcp-remove-${back}`)?.focus();
  }

  async remove(id) {
    this.say("");
    const reply = await this.client.send({ type: "mcp.removeServer", server: id });
    this.confirming = null;
    if (reply.type === "command.ack") this.say(t("settings.mcp.removed", { server: id }));
    else this.say(t("settings.refused", { message: reply.message }), true);
    this.redraw();
    if (reply.type === "command.ack") this.f.id.focus();
  }

  async setToken(id, token) {
    this.say("");
    if (token === "") return;
    const reply = await this.client.send({ type: "mcp.setToken", server: id, ...(token === null ? {} : { token }) });
    if (reply.type !== "command.ack") {
      this.say(t("settings.refused", { message: reply.message }), true); // the typed token stays
      return;
    }
    this.typedTokens.delete(id); // it lives with the host only now
    const input = document.getElementById(`mcp-token-${id}`);
    if (input) input.value = "";
    this.say(t(token === null ? "settings.mcp.tokenCleared" : "settings.mcp.tokenSaved", { server: id }));
  }

  // -- the form --------------------------------------------------------------------------------

  edit(server) {
    const f = this.f;
    this.editing = server.id;
    f.id.value = server.id;
    f.id.readOnly = true; // another id is another server: add it instead
    f.url.value = server.url;
    f.enabled.checked = server.enabled;
    f.tools.value = (server.allowList || []).join("\n");
    f.timeout.value = String(server.timeoutSeconds);
    f.elicitation.checked = !!server.elicitation;
    f.sampling.checked = !!server.sampling;
    this.formTitle.textContent = t("settings.mcp.editTitle", { server: server.id });
    this.submit.textContent = t("settings.mcp.save");
    this.cancel.hidden = false;
    this.mark(null);
    this.formStatus.textContent = "";
    f.url.focus();
  }

  // The server being edited is gone (removed here or elsewhere): the typed text stays, and saving
  // adds it again.
  detach() {
    this.editing = null;
    this.f.id.readOnly = false;
    this.formTitle.textContent = t("settings.mcp.addTitle");
    this.submit.textContent = t("settings.mcp.add");
    this.cancel.hidden = true;
  }

  reset() {
    const f = this.f;
    this.detach();
    f.id.value = "";
    f.url.value = "";
    f.enabled.checked = true;
    f.tools.value = "";
    f.timeout.value = "";
    f.elicitation.checked = false;
    f.sampling.checked = false;
    this.mark(null);
  }

  async save(event) {
    event.preventDefault();
    const f = this.f;
    const adding = this.editing === null;
    const server = adding ? f.id.value.trim() : this.editing;
    const tools = f.tools.value.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
    this.mark(null);
    this.formStatus.textContent = "";
    this.submit.disabled = true;
    const reply = await this.client.send({ type: "mcp.saveServer", server, url: f.url.value.trim(), enabled: f.enabled.checked,
      tools: tools.length ? tools : null, timeoutSeconds: f.timeout.value.trim() === "" ? null : Number(f.timeout.value),
      elicitation: f.elicitation.checked, sampling: f.sampling.checked, new: adding });
    this.submit.disabled = false;
    if (reply.type !== "command.ack") {
      // The typed text stays for the user to fix; the fields the refusal names are marked.
      const marked = fieldsIn(reply.message);
      this.mark(t("settings.mcp.refused", { message: reply.message }), marked);
      const first = ["id", "url", "enabled", "tools", "timeout"].find((name) => marked.has(name));
      if (first && !(first === "id" && f.id.readOnly)) f[first].focus();
      return;
    }
    this.formStatus.textContent = t(adding && f.enabled.checked ? "settings.mcp.added" : "settings.mcp.saved", { server });
    this.reset();
  }

  // Show (or with null, clear) the form's error, marking the fields it is about.
  mark(text, fields = new Set()) {
    this.error.textContent = text || "";
    for (const [name, input] of Object.entries(this.f)) {
      if (fields.has(name)) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }
}
