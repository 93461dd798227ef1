// Tabwarden page executor, part 10: strict parameter checks. The host validates the same
// parameters before it sends anything; this second check, against the schemas generated from the
// host's declarations (generated/tools.js), means a malformed call never reaches the page even
// if the host and the extension disagree. Unknown keys, `element` and `tabId` included, are
// refused: the host strips those before dispatch. Only the JSON Schema the host generates is
// understood (object, array, string, integer, number, boolean, null, enum, anyOf, $ref and a
// discriminator), plus the declared cross-field rules.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("params")) return;
  TW.parts.add("params");
  const CODES = TW.codes;

  const SCHEMAS = globalThis.__tabwardenTools.content;

  const isPlainObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  const quoted = (values) => values.map((v) => JSON.stringify(v)).join(", ");

  function describe(schema, defs) {
    if (schema.$ref) return describe(defs[schema.$ref.split("/").pop()], defs);
    if (schema.enum) return `one of ${quoted(schema.enum)}`;
    if (schema.anyOf) return schema.anyOf.map((branch) => describe(branch, defs)).join(" or ");
    if (schema.type === "integer" && schema.minimum !== undefined) return `an integer ${schema.minimum}..${schema.maximum}`;
    return schema.type === "object" ? "an object" : `a ${schema.type}`;
  }

  function checkValue(schema, value, path, defs) {
    if (schema.$ref) return checkValue(defs[schema.$ref.split("/").pop()], value, path, defs);
    if (schema.discriminator) {
      if (!isPlainObject(value)) return `${path}: expected an object`;
      const key = schema.discriminator.propertyName;
      const ref = schema.discriminator.mapping[value[key]];
      if (!ref) return `${path}.${key}: expected one of ${quoted(Object.keys(schema.discriminator.mapping))}`;
      return checkValue({ $ref: ref }, value, path, defs);
    }
    if (schema.anyOf) {
      const problems = schema.anyOf.map((branch) => checkValue(branch, value, path, defs));
      if (problems.some((bad) => !bad)) return "";
      const real = schema.anyOf.filter((branch) => branch.type !== "null");
      return real.length === 1 ? problems[schema.anyOf.indexOf(real[0])] : `${path}: expected ${describe(schema, defs)}`;
    }
    if (schema.enum) return schema.enum.includes(value) ? "" : `${path}: expected one of ${quoted(schema.enum)}`;
    switch (schema.type) {
      case "null":
        return value === null ? "" : `${path}: expected null`;
      case "boolean":
        return typeof value === "boolean" ? "" : `${path}: expected true or false`;
      case "integer":
      case "number":
        if (schema.type === "integer" ? !Number.isInteger(value) : typeof value !== "number" || !Number.isFinite(value)) {
          return `${path}: expected ${schema.type === "integer" ? "an integer" : "a number"}`;
        }
        if ((schema.minimum !== undefined && value < schema.minimum) || (schema.maximum !== undefined && value > schema.maximum)) {
          return `${path}: expected ${schema.minimum ?? "-∞"}..${schema.maximum ?? "∞"}, got ${value}`;
        }
        return "";
      case "string":
        if (typeof value !== "string") return `${path}: expected a string`;
        if (schema.minLength !== undefined && value.length < schema.minLength) return `${path}: expected at least ${schema.minLength} characters`;
        if (schema.maxLength !== undefined && value.length > schema.maxLength) return `${path}: expected at most ${schema.maxLength} characters, got ${value.length}`;
        if (schema.pattern && !new RegExp(schema.pattern).test(value)) return `${path}: does not have the expected form (${schema.pattern})`;
        return "";
      case "array": {
        if (!Array.isArray(value)) return `${path}: expected an array`;
        const min = schema.minItems ?? 0;
        const max = schema.maxItems ?? Infinity;
        if (value.length < min || value.length > max) return `${path}: expected ${min}..${max} items, got ${value.length}`;
        for (const [i, item] of value.entries()) {
          const bad = checkValue(schema.items, item, `${path}[${i}]`, defs);
          if (bad) return bad;
        }
        return "";
      }
      case "object":
        return checkObject(schema, value, path, defs);
      default:
        return `${path}: unsupported schema`;
    }
  }

  function checkObject(schema, value, path, defs) {
    if (!isPlainObject(value)) return `${path}: expected an object`;
    const properties = schema.properties || {};
    for (const key of Object.keys(value)) {
      if (!(key in properties)) return `${path}.${key}: unknown parameter`;
    }
    for (const key of schema.required || []) {
      if (value[key] === undefined || value[key] === null) return `${path}.${key}: required`;
    }
    for (const [key, property] of Object.entries(properties)) {
      if (value[key] === undefined || (value[key] === null && !(schema.required || []).includes(key))) continue;
      const bad = checkValue(property, value[key], `${path}.${key}`, defs);
      if (bad) return bad;
    }
    return "";
  }

  // The declared cross-field rules (see host/tools/params.py, Rule).
  function given(value, when) {
    if (value === undefined || value === null) return false;
    if (when === "string") return typeof value === "string";
    return when === undefined || value === when;
  }

  function brokenRule(rule, params) {
    const present = rule.fields.map((name) => given(params[name], rule.when[name]));
    if (rule.kind === "at_least_one") return !present.some(Boolean);
    if (rule.kind === "not_together") return present.every(Boolean);
    return present[0] && !present.slice(1).every(Boolean); // needs
  }

  TW.knownTool = (tool) => Object.prototype.hasOwnProperty.call(SCHEMAS, tool);

  // Throws invalid_params (phase precheck) naming the first bad field.
  TW.checkParams = (tool, params) => {
    const schema = SCHEMAS[tool];
    let bad = checkObject(schema, params, "$", schema.$defs || {});
    if (!bad) bad = (schema.rules || []).filter((rule) => brokenRule(rule, params)).map((rule) => `$: ${rule.message}`)[0] || "";
    if (bad) throw TW.fail(CODES.INVALID_PARAMS, `invalid params for ${tool}: ${bad}`, "precheck", false);
  };
})();
