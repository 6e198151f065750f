// Backpressure without unbounded buffering: a writer that fills a socket's write buffer past
// the connection's buffer limit pauses its source until that data has reached the kernel.
// The write callback of the chunk that crossed the limit is the signal: unlike 'drain', it
// comes whatever the limit is relative to the stream's own high-water mark.

import type * as net from 'node:net';

/**
 * Writes `data` (a Buffer, or a latin1 string such as a message head) to `socket`. When the
 * write takes the socket's buffered bytes past `limit`, `onFlushed` is called once those bytes
 * have been handed to the kernel, and the return value is true: the caller should stop
 * reading its source until then. `onFlushed` may also run when nothing was paused (the write
 * completed at once); it must be harmless then.
 */
export function writeWithLimit(socket: net.Socket, data: Buffer | string, limit: number, onFlushed: () => void): boolean {
  if (socket.writableLength + data.length <= limit) {
    socket.write(data, 'latin1');
    return false;
  }
  socket.write(data, 'latin1', onFlushed);
  return socket.writableLength > limit;
}
