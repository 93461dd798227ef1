// Chunked messages: a logical message too large for one native-messaging frame travels as
// numbered slices of its JSON text, joined here before it is handled.
import { FRAMES } from "../generated/protocol.js";
import { PROTOCOL_CODES, failure } from "./failures.js";

export class ChunkAssembler {
  constructor() {
    this.partial = new Map(); // messageId -> { count, parts: string[], size }
  }

  // Returns the decoded message when `chunk` completes one, else null. Throws on a bad sequence.
  absorb(chunk) {
    let entry = this.partial.get(chunk.messageId);
    if (!entry) {
      if (chunk.index !== 0) throw failure(PROTOCOL_CODES.CHUNK_ERROR, `chunk ${chunk.index} of unknown message ${chunk.messageId}`);
      if (this.partial.size >= FRAMES.maxPartialMessages) {
        throw failure(PROTOCOL_CODES.CHUNK_ERROR, `more than ${FRAMES.maxPartialMessages} chunked messages in flight`);
      }
      entry = { count: chunk.count, parts: [], size: 0 };
      this.partial.set(chunk.messageId, entry);
    }
    if (chunk.count !== entry.count || chunk.index !== entry.parts.length) {
      this.partial.delete(chunk.messageId);
      throw failure(PROTOCOL_CODES.CHUNK_ERROR, `chunk ${chunk.index}/${chunk.count} of message ${chunk.messageId} out of sequence`);
    }
    if (typeof chunk.data !== "string") throw failure(PROTOCOL_CODES.CHUNK_ERROR, "chunk data must be a string");
    entry.parts.push(chunk.data);
    entry.size += chunk.data.length;
    if (entry.size > FRAMES.maxChunkedMessage) {
      this.partial.delete(chunk.messageId);
      throw failure(PROTOCOL_CODES.FRAME_TOO_LARGE, `chunked message exceeds ${FRAMES.maxChunkedMessage} bytes`);
    }
    if (entry.parts.length < entry.count) return null;
    this.partial.delete(chunk.messageId);
    try {
      return JSON.parse(entry.parts.join(""));
    } catch (err) {
      throw failure(PROTOCOL_CODES.BAD_FRAME, `chunked message is not JSON: ${err.message}`);
    }
  }
}

// Splits a message for the host when its JSON would not fit one frame (Chrome refuses
// messages above 64 MiB from the extension). Slices are cut between UTF-16 code units that do
// not split a surrogate pair; at 3 UTF-8 bytes per unit and at most doubled by escaping, a
// slice of 8 Mi units stays below the frame limit.
const SLICE_UNITS = 8 * 1024 * 1024;

export function splitForHost(message, nextId, limit = FRAMES.maxBrowserFrame - 1024) {
  const text = JSON.stringify(message);
  if (text.length * 3 < limit) return [message]; // a UTF-8 upper bound: no need to measure
  if (new TextEncoder().encode(text).length <= limit) return [message];
  if (text.length > FRAMES.maxChunkedMessage) {
    throw failure(PROTOCOL_CODES.FRAME_TOO_LARGE, `message of ${text.length} characters exceeds ${FRAMES.maxChunkedMessage}`);
  }
  const pieces = [];
  for (let start = 0; start < text.length;) {
    let stop = Math.min(start + SLICE_UNITS, text.length);
    const code = text.charCodeAt(stop - 1);
    if (stop < text.length && code >= 0xd800 && code <= 0xdbff) stop -= 1; // keep the pair together
    pieces.push(text.slice(start, stop));
    start = stop;
  }
  const messageId = nextId();
  return pieces.map((data, index) => ({ type: "chunk", messageId, index, count: pieces.length, data }));
}
