// gRPC's length-prefixed messages (gRPC over HTTP/2): a compressed-flag byte, a 4-byte big-endian
// length, the message. This build neither sends nor reads compressed messages. Pure.

const PREFIX_BYTES = 5;

/** `message` as one uncompressed gRPC frame. */
export function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, PREFIX_BYTES);
  return frame;
}

/** The messages of a body made of whole uncompressed frames; null for anything else (compressed, truncated). */
export function grpcMessages(body: Buffer): Buffer[] | null {
  const messages: Buffer[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (body.length - pos < PREFIX_BYTES || body[pos] !== 0) return null;
    const length = body.readUInt32BE(pos + 1);
    pos += PREFIX_BYTES;
    if (body.length - pos < length) return null;
    messages.push(body.subarray(pos, pos + length));
    pos += length;
  }
  return messages;
}
