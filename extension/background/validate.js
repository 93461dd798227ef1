// Boundary checks for frames from the host: known type, required fields present, no unknown
// fields, and the generic size limits. The host is trusted code, but a version skew or a bug
// must produce a clear protocol error rather than a half-handled message.
import { HOST_MESSAGE_FIELDS, LIMITS } from "../generated/protocol.js";
import { protocolError } from "./chunks.js";

export function validateHostMessage(msg) {
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    throw protocolError("bad_frame", "frame is not a JSON object");
  }
  const fields = HOST_MESSAGE_FIELDS[msg.type];
  if (!fields) throw protocolError("unknown_type", `unknown message type ${JSON.stringify(msg.type)}`);
  for (const name of fields.required) {
    if (!(name in msg)) throw protocolError("invalid_message", `${msg.type}: missing field ${name}`);
  }
  for (const name of Object.keys(msg)) {
    if (name !== "type" && !fields.required.includes(name) && !fields.optional.includes(name)) {
      throw protocolError("invalid_message", `${msg.type}: unknown field ${name}`);
    }
  }
  checkLimits(msg, LIMITS.browser);
  return msg;
}

export function checkLimits(value, limits) {
  const stack = [[value, 0]];
  let nodes = 0;
  while (stack.length) {
    const [item, depth] = stack.pop();
    if (depth > limits.maxDepth) throw protocolError("too_deep", `nesting deeper than ${limits.maxDepth}`);
    if (typeof item === "string") {
      if (item.length > limits.maxString) throw protocolError("string_too_long", `string longer than ${limits.maxString}`);
      continue;
    }
    if (item === null || typeof item !== "object") continue;
    const entries = Array.isArray(item) ? item : Object.values(item);
    if (Array.isArray(item) && item.length > limits.maxArray) throw protocolError("array_too_long", `array longer than ${limits.maxArray}`);
    if (!Array.isArray(item) && entries.length > limits.maxKeys) throw protocolError("too_many_keys", `object with more than ${limits.maxKeys} keys`);
    nodes += entries.length;
    if (nodes > limits.maxNodes) throw protocolError("too_many_nodes", `more than ${limits.maxNodes} values`);
    for (const child of entries) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
      else if (typeof child === "string" && child.length > limits.maxString) {
        throw protocolError("string_too_long", `string longer than ${limits.maxString}`);
      }
    }
  }
}
