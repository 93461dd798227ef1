// Tabwarden page executor, part 10: strict parameter checks. The host validates the same bounds
// (host/browser/params.py) before it sends anything; this second check means a malformed call
// never reaches the page even if the host and the extension disagree. Unknown keys, `element`
// and `tabId` included, are refused: the host strips those before dispatch.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("params")) return;
  TW.parts.add("params");

  const REF_PATTERN = /^s[0-9a-z]{1,32}_[0-9]{1,9}_[0-9]{1,9}$/;
  const str = (min, max) => ({ kind: "string", min, max });
  const int = (min, max) => ({ kind: "int", min, max });
  const oneOf = (...values) => ({ kind: "enum", values });
  const bool = { kind: "bool" };
  const ref = { kind: "ref" };
  const required = (spec) => ({ ...spec, required: true });

  const RECOVERY = { allowRecovery: bool };
  const CLICK = { ref: required(ref), button: oneOf("left", "right"), doubleClick: bool };
  const TYPE = { ref: required(ref), text: required(str(0, 100000)), mode: oneOf("replace", "append"), submit: bool, slowly: bool };
  const SELECT = { ref: required(ref), values: required({ kind: "array", min: 1, max: 100, item: str(0, 1000) }) };

  const SCHEMAS = {
    read_page: { mode: oneOf("snapshot", "article", "full"), maxTokens: int(0, 6000) },
    find_in_page: { query: required(str(1, 500)) },
    extract: { scope: ref },
    get_selection: {},
    scroll: { target: ref, direction: required(oneOf("up", "down", "left", "right")), amount: { kind: "amount" } },
    wait_for: { text: str(1, 1000), textGone: { kind: "boolOrString", max: 1000 }, timeMs: int(0, 30000) },
    get_rect: { ref: required(ref) },
    validate_ref: { ref: required(ref) },
    focus: { ref: required(ref) },
    click: { ...CLICK, ...RECOVERY },
    type: { ...TYPE, ...RECOVERY },
    select_option: { ...SELECT, ...RECOVERY },
    hover: { ref: required(ref) },
    press_key: { key: required(str(1, 64)), ref },
    batch_actions: { actions: required({ kind: "batch", min: 1, max: 4 }) },
  };
  const BATCH_SCHEMAS = { click: CLICK, type: TYPE, select_option: SELECT };

  function isPlainObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  function problem(path, message) {
    return `${path}: ${message}`;
  }

  function checkValue(spec, value, path) {
    switch (spec.kind) {
      case "string":
        if (typeof value !== "string") return problem(path, "expected a string");
        if (value.length < spec.min) return problem(path, `expected at least ${spec.min} characters`);
        if (value.length > spec.max) return problem(path, `expected at most ${spec.max} characters, got ${value.length}`);
        return "";
      case "int":
        if (!Number.isInteger(value)) return problem(path, "expected an integer");
        if (value < spec.min || value > spec.max) return problem(path, `expected ${spec.min}..${spec.max}, got ${value}`);
        return "";
      case "bool":
        return typeof value === "boolean" ? "" : problem(path, "expected true or false");
      case "enum":
        return spec.values.includes(value) ? "" : problem(path, `expected one of ${spec.values.map((v) => JSON.stringify(v)).join(", ")}`);
      case "ref":
        if (typeof value !== "string" || value.length > 64 || !REF_PATTERN.test(value)) {
          return problem(path, "expected a ref from read_page such as s1a2b3_4_5");
        }
        return "";
      case "amount":
        if (value === "page" || value === "end") return "";
        if (!Number.isInteger(value) || value < 0 || value > 100000) return problem(path, 'expected "page", "end" or 0..100000 pixels');
        return "";
      case "boolOrString":
        if (typeof value === "boolean") return "";
        return checkValue(str(1, spec.max), value, path);
      case "array":
        if (!Array.isArray(value)) return problem(path, "expected an array");
        if (value.length < spec.min || value.length > spec.max) return problem(path, `expected ${spec.min}..${spec.max} items, got ${value.length}`);
        for (const [i, item] of value.entries()) {
          const bad = checkValue(spec.item, item, `${path}[${i}]`);
          if (bad) return bad;
        }
        return "";
      case "batch":
        if (!Array.isArray(value)) return problem(path, "expected an array");
        if (value.length < spec.min || value.length > spec.max) return problem(path, `expected ${spec.min}..${spec.max} actions, got ${value.length}`);
        for (const [i, item] of value.entries()) {
          if (!isPlainObject(item)) return problem(`${path}[${i}]`, "expected an object");
          const schema = BATCH_SCHEMAS[item.action];
          if (!schema) return problem(`${path}[${i}].action`, 'expected "click", "type" or "select_option"');
          const { action, ...rest } = item;
          const bad = checkObject(schema, rest, `${path}[${i}]`);
          if (bad) return bad;
        }
        return "";
      default:
        return problem(path, "unsupported schema");
    }
  }

  function checkObject(schema, params, path) {
    for (const key of Object.keys(params)) {
      if (!(key in schema)) return problem(`${path}.${key}`, "unknown parameter");
    }
    for (const [key, spec] of Object.entries(schema)) {
      const value = params[key];
      if (value === undefined || value === null) {
        if (spec.required) return problem(`${path}.${key}`, "required");
        continue;
      }
      const bad = checkValue(spec, value, `${path}.${key}`);
      if (bad) return bad;
    }
    return "";
  }

  TW.knownTool = (tool) => Object.prototype.hasOwnProperty.call(SCHEMAS, tool);

  // Throws invalid_params (phase precheck) naming the first bad field.
  TW.checkParams = (tool, params) => {
    if (!isPlainObject(params)) throw TW.fail("invalid_params", `invalid params for ${tool}: $: expected an object`, "precheck", false);
    let bad = checkObject(SCHEMAS[tool], params, "$");
    if (!bad && tool === "wait_for") {
      const modes = (params.text !== undefined) + (typeof params.textGone === "string");
      if (modes > 1) bad = "$: give either text (optionally with textGone: true) or textGone as a string, not both";
      if (params.textGone === true && params.text === undefined) bad = "$.textGone: true needs text";
      if (params.text === undefined && params.textGone === undefined && params.timeMs === undefined) bad = "$: give text, textGone or timeMs";
    }
    if (bad) throw TW.fail("invalid_params", `invalid params for ${tool}: ${bad}`, "precheck", false);
  };
})();
