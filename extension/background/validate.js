// Boundary checks for frames from the host: known type, required fields present, no unknown
// fields, and the generic size limits. The host is trusted code, but a version skew or a bug
// must produce a clear protocol error rather than a half-handled message.
import { HOST_MESSAGE_FIELDS, LIMITS } from "../generated/protocol.js";
import { PROTOCOL_CODES, failure } from "./failures.js";

export function validateHostMessage(msg) {
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    throw failure(PROTOCOL_CODES.BAD_FRAME, "frame is not a JSON object");
  }
  const fields = HOST_MESSAGE_FIELDS[msg.type];
  if (!fields) throw failure(PROTOCOL_CODES.UNKNOWN_TYPE, `unknown message type ${JSON.stringify(msg.type)}`);
  for (const name of fields.required) {
    if (!(name in msg)) throw failure(PROTOCOL_CODES.INVALID_MESSAGE, `${msg.type}: missing field ${name}`);
  }
  for (const name of Object.keys(msg)) {
    if (name !== "type" && !fields.required.includes(name) && !fields.optional.includes(name)) {
      throw failure(PROTOCOL_CODES.INVALID_MESSAGE, `${msg.type}: unknown field ${name}`);
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
    if (depth > limits.maxDepth) throw failure(PROTOCOL_CODES.TOO_DEEP, `nesting deeper than ${limits.maxDepth}`);
    if (typeof item === "string") {
      if (item.length > limits.maxString) throw failure(PROTOCOL_CODES.STRING_TOO_LONG, `string longer than ${limits.maxString}`);
      continue;
    }
    if (item === null || typeof item !== "object") continue;
    const entries = Array.isArray(item) ? item : Object.values(item);
    if (Array.isArray(item) && item.length > limits.maxArray) throw failure(PROTOCOL_CODES.ARRAY_TOO_LONG, `array longer than ${limits.maxArray}`);
    if (!Array.isArray(item) && entries.length > limits.maxKeys) throw failure(PROTOCOL_CODES.TOO_MANY_KEYS, `object with more than ${limits.maxKeys} keys`);
    nodes += entries.length;
    if (nodes > limits.maxNodes) throw failure(PROTOCOL_CODES.TOO_MANY_NODES, `more than ${limits.maxNodes} values`);
    for (const child of entries) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
      else if (typeof child === "string" && child.length > limits.maxString) {
        throw failure(PROTOCOL_CODES.STRING_TOO_LONG, `string longer than ${limits.maxString}`);
      }
    }
  }
}
