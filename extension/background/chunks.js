// Chunked messages: a logical message too large for one native-messaging frame travels as
// base64 slices of its UTF-8 JSON, numbered, and is joined here before it is handled.
import { FRAMES } from "../generated/protocol.js";

export class ChunkAssembler {
  constructor() {
    this.partial = new Map(); // messageId -> { count, parts: string[], size }
  }

  // Returns the decoded message when `chunk` completes one, else null. Throws on a bad sequence.
  absorb(chunk) {
    let entry = this.partial.get(chunk.messageId);
    if (!entry) {
      if (chunk.index !== 0) throw protocolError("chunk_error", `chunk ${chunk.index} of unknown message ${chunk.messageId}`);
      if (this.partial.size >= FRAMES.maxPartialMessages) {
        throw protocolError("chunk_error", `more than ${FRAMES.maxPartialMessages} chunked messages in flight`);
      }
      entry = { count: chunk.count, parts: [], size: 0 };
      this.partial.set(chunk.messageId, entry);
    }
    if (chunk.count !== entry.count || chunk.index !== entry.parts.length) {
      this.partial.delete(chunk.messageId);
      throw protocolError("chunk_error", `chunk ${chunk.index}/${chunk.count} of message ${chunk.messageId} out of sequence`);
    }
    entry.parts.push(chunk.data);
    entry.size += chunk.data.length;
    if (entry.size > (FRAMES.maxChunkedMessage * 4) / 3 + 4) {
      this.partial.delete(chunk.messageId);
      throw protocolError("frame_too_large", `chunked message exceeds ${FRAMES.maxChunkedMessage} bytes`);
    }
    if (entry.parts.length < entry.count) return null;
    this.partial.delete(chunk.messageId);
    const bytes = concat(entry.parts.map(base64ToBytes));
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return JSON.parse(text);
    } catch (err) {
      throw protocolError("bad_frame", `chunked message is not UTF-8 JSON: ${err.message}`);
    }
  }
}

// Splits a message for the host when its JSON would not fit one frame (Chrome refuses
// messages above 64 MiB from the extension).
export function splitForHost(message, nextId, limit = FRAMES.maxBrowserFrame - 1024) {
  const text = JSON.stringify(message);
  if (text.length * 3 < limit) return [message]; // a UTF-8 upper bound: no need to measure
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= limit) return [message];
  if (bytes.length > FRAMES.maxChunkedMessage) {
    throw protocolError("frame_too_large", `message of ${bytes.length} bytes exceeds ${FRAMES.maxChunkedMessage}`);
  }
  const step = FRAMES.chunkRawBytes * 16;
  const count = Math.ceil(bytes.length / step);
  const messageId = nextId();
  const out = [];
  for (let index = 0; index < count; index++) {
    out.push({ type: "chunk", messageId, index, count, data: bytesToBase64(bytes.subarray(index * step, (index + 1) * step)) });
  }
  return out;
}

export function protocolError(code, message) {
  const err = new Error(message);
  err.code = code;
  return err;
}

function base64ToBytes(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function bytesToBase64(bytes) {
  let bin = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + step));
  return btoa(bin);
}

function concat(arrays) {
  const total = arrays.reduce((n, a) => n + a.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const a of arrays) {
    out.set(a, offset);
    offset += a.length;
  }
  return out;
}
