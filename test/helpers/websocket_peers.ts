// A WebSocket echo server and client written from RFC 6455, small enough to read: the handshake,
// and frames of up to 64 KiB. The test process speaks both ends itself, so what crosses the
// proxy is known to the byte.

import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { closeServer, listen } from './http_peers';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC65B11';
const OPCODE_TEXT = 0x1;
const OPCODE_CLOSE = 0x8;

export function acceptKey(key: string): string {
  return crypto.createHash('sha1').update(key + GUID).digest('base64');
}

/** One frame, FIN set; masked as a client must send it. */
export function frame(opcode: number, payload: Buffer, masked: boolean): Buffer {
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : 2;
  const header = Buffer.alloc(2 + lengthBytes + (masked ? 4 : 0));
  header[0] = 0x80 | opcode;
  header[1] = (masked ? 0x80 : 0) | (length < 126 ? length : 126);
  if (lengthBytes === 2) header.writeUInt16BE(length, 2);
  if (!masked) return Buffer.concat([header, payload]);
  const mask = crypto.randomBytes(4);
  mask.copy(header, 2 + lengthBytes);
  const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([header, body]);
}

interface Frame {
  readonly opcode: number;
  readonly payload: Buffer;
  /** Bytes the frame took on the wire. */
  readonly size: number;
}

/** The first whole frame in `data`, or null while it is incomplete. */
function readFrame(data: Buffer): Frame | null {
  if (data.length < 2) return null;
  const masked = (data[1]! & 0x80) !== 0;
  let length = data[1]! & 0x7f;
  let pos = 2;
  if (length === 126) {
    if (data.length < 4) return null;
    length = data.readUInt16BE(2);
    pos = 4;
  } else if (length === 127) {
    throw new Error('frames over 64 KiB are beyond this test peer');
  }
  const mask = masked ? data.subarray(pos, pos + 4) : null;
  if (masked) pos += 4;
  if (data.length < pos + length) return null;
  const payload = Buffer.from(data.subarray(pos, pos + length));
  if (mask !== null) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
  return { opcode: data[0]! & 0x0f, payload, size: pos + length };
}

export interface EchoServer {
  readonly port: number;
  /** The handshake requests received, in order. */
  readonly handshakes: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** Answers each WebSocket handshake with 101 and echoes each text frame; a close frame is answered and the connection ended. */
export async function startEchoServer(): Promise<EchoServer> {
  const handshakes: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((_req, res) => {
    res.statusCode = 426;
    res.end('websocket only');
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    handshakes.push(req.headers);
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${acceptKey(String(req.headers['sec-websocket-key']))}\r\n\r\n`,
    );
    let pending = head;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let f = readFrame(pending); f !== null; f = readFrame(pending)) {
        pending = pending.subarray(f.size);
        if (f.opcode === OPCODE_CLOSE) {
          socket.end(frame(OPCODE_CLOSE, f.payload, false));
          return;
        }
        socket.write(frame(f.opcode, f.payload, false));
      }
    });
    socket.on('error', () => socket.destroy());
  });
  const port = await listen(server);
  return { port, handshakes, close: () => closeServer(server) };
}

export interface WebSocketClient {
  /** The handshake's response head, status line first. */
  readonly response: string;
  send(text: string): void;
  /** The next frame's text. */
  receive(): Promise<string>;
  /** Sends a close frame; resolves when the server's close frame came and the connection ended. */
  close(): Promise<void>;
  /** Bytes written and read after the handshake. */
  readonly sentBytes: number;
  readonly receivedBytes: number;
}

/** A byte stream a WebSocket client runs over after its handshake: a socket, or an HTTP/2 stream. */
interface FrameTransport {
  write(data: Buffer): void;
  end(): void;
}

/**
 * The client's side of a WebSocket whose handshake is done: `receiveBytes` is to be called with
 * what the transport reads, `transportEnded` when it ends.
 */
function frameClient(response: string, transport: FrameTransport): { client: WebSocketClient; receiveBytes(chunk: Buffer): void; transportEnded(): void } {
  let buffered = Buffer.alloc(0);
  let sentBytes = 0;
  let receivedBytes = 0;
  const frames: Frame[] = [];
  const waiting: ((f: Frame) => void)[] = [];
  let ended: (() => void) | null = null;
  const write = (opcode: number, payload: Buffer): void => {
    const data = frame(opcode, payload, true);
    sentBytes += data.length;
    transport.write(data);
  };
  const next = (): Promise<Frame> => {
    const f = frames.shift();
    return f !== undefined ? Promise.resolve(f) : new Promise((r) => waiting.push(r));
  };
  const client: WebSocketClient = {
    response,
    send: (text) => write(OPCODE_TEXT, Buffer.from(text)),
    receive: async () => (await next()).payload.toString(),
    close: async () => {
      const closed = new Promise<void>((r) => (ended = r));
      write(OPCODE_CLOSE, Buffer.from([0x03, 0xe8]));
      const reply = await next();
      if (reply.opcode !== OPCODE_CLOSE) throw new Error(`expected a close frame, got opcode ${reply.opcode}`);
      await closed;
      transport.end();
    },
    get sentBytes() {
      return sentBytes;
    },
    get receivedBytes() {
      return receivedBytes;
    },
  };
  return {
    client,
    receiveBytes: (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let f = readFrame(buffered); f !== null; f = readFrame(buffered)) {
        buffered = buffered.subarray(f.size);
        receivedBytes += f.size;
        const waiter = waiting.shift();
        if (waiter !== undefined) waiter(f);
        else frames.push(f);
      }
    },
    transportEnded: () => ended?.(),
  };
}

/** Opens a WebSocket through `port` (the proxy): the handshake's answer must be 101 with the right accept key. */
export function connectWebSocket(port: number, path: string, host: string): Promise<WebSocketClient> {
  return new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString('base64');
    const socket = net.connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    let channel: ReturnType<typeof frameClient> | null = null;
    socket.on('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      if (channel !== null) {
        channel.receiveBytes(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const response = head.subarray(0, end).toString('latin1');
      if (!response.startsWith('HTTP/1.1 101') || !response.toLowerCase().includes(`sec-websocket-accept: ${acceptKey(key).toLowerCase()}`)) {
        socket.destroy();
        reject(new Error(`the handshake was refused:\n${response}`));
        return;
      }
      channel = frameClient(response, { write: (data) => socket.write(data), end: () => socket.end() });
      resolve(channel.client);
      channel.receiveBytes(head.subarray(end + 4));
    });
    socket.on('end', () => channel?.transportEnded());
    socket.on('error', reject);
  });
}

/**
 * Opens a WebSocket over HTTP/2 through `port` (the proxy, h2c), as RFC 8441 does: a CONNECT
 * stream with `:protocol: websocket`, answered 200. The key is sent anyway, for an HTTP/1
 * upstream that checks it; `response` is the response's `:status`.
 */
export function connectWebSocketH2(port: number, path: string, host: string): Promise<WebSocketClient & { readonly session: http2.ClientHttp2Session }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    session.once('remoteSettings', (settings) => {
      if (settings.enableConnectProtocol !== true) {
        session.destroy();
        reject(new Error('the proxy did not allow extended CONNECT'));
        return;
      }
      const stream = session.request(
        { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': path, ':authority': host, 'sec-websocket-key': crypto.randomBytes(16).toString('base64'), 'sec-websocket-version': '13' },
        { endStream: false },
      );
      let channel: ReturnType<typeof frameClient> | null = null;
      stream.on('response', (headers) => {
        const status = String(headers[':status']);
        if (status !== '200') {
          session.destroy();
          reject(new Error(`the extended CONNECT was answered ${status}`));
          return;
        }
        channel = frameClient(status, {
          write: (data) => stream.write(data),
          end: () => {
            stream.end();
            session.close();
          },
        });
        resolve(Object.assign(channel.client, { session }));
      });
      stream.on('data', (chunk: Buffer) => channel?.receiveBytes(chunk));
      stream.on('end', () => channel?.transportEnded());
      stream.on('error', reject);
    });
  });
}
