import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListenerConfig } from '../../src/config/model';
import { NativeError } from '../../src/native/addon';
import { ListenerChangeQueue } from '../../src/server/listener_change_queue';
import { type SupervisorMessage, WORKER_PROTOCOL_VERSION } from '../../src/server/worker_protocol';
import { waitFor } from '../helpers/proxy_process';

const listener = (name: string) => ({ name }) as unknown as ListenerConfig;
const remove = (name: string): SupervisorMessage => ({ v: WORKER_PROTOCOL_VERSION, type: 'listener_remove', name });

/** A handoff socket that holds `room` datagrams until the worker reads one per listener_add it handles. */
function worker(room: number) {
  const sent: string[] = [];
  let queued = 0;
  const queue = new ListenerChangeQueue({
    sendSocket: (name) => {
      if (queued === room) throw new NativeError('sendmsg: Resource temporarily unavailable', 11, 'EAGAIN', 'sendmsg');
      queued++;
      sent.push(`socket ${name}`);
    },
    sendMessage: (message) => {
      sent.push(message.type === 'listener_add' ? `add ${message.config.name}` : `${message.type} ${'name' in message ? message.name : ''}`);
      return true;
    },
    onHandoffError: (name, error) => sent.push(`error ${name}: ${error.message}`),
  });
  /** The worker handles what came: each listener_add takes its datagram. */
  const read = () => (queued = 0);
  return { queue, sent, read };
}

test('a push of more listeners than the handoff socket holds waits for room, in order, with later changes behind', async () => {
  const { queue, sent, read } = worker(2);
  for (const name of ['a', 'b', 'c', 'd']) queue.addListener(listener(name), 10);
  queue.send(remove('a'));
  assert.deepEqual(sent, ['socket a', 'add a', 'socket b', 'add b']);
  read();
  await waitFor('c, d and the removal behind them', () => (sent.length === 9 ? true : undefined), 2000);
  assert.deepEqual(sent.slice(4), ['socket c', 'add c', 'socket d', 'add d', 'listener_remove a']);
});

test('a socket the supervisor closes before its turn is not sent; another error skips that listener only', async () => {
  const { queue, sent, read } = worker(1);
  queue.addListener(listener('a'), 10);
  queue.addListener(listener('b'), 11);
  queue.addListener(listener('c'), 12);
  queue.forgetSocket(11);
  read();
  await waitFor('c handed over', () => (sent.includes('add c') ? true : undefined), 2000);
  assert.deepEqual(sent, ['socket a', 'add a', 'socket c', 'add c']);

  const failing = new ListenerChangeQueue({
    sendSocket: (name) => {
      if (name === 'x') throw new NativeError('sendmsg: Connection refused', 111, 'ECONNREFUSED', 'sendmsg');
    },
    sendMessage: (message) => (sent.push(message.type === 'listener_add' ? `add ${message.config.name}` : message.type), true),
    onHandoffError: (name) => sent.push(`error ${name}`),
  });
  failing.addListener(listener('x'), 1);
  failing.addListener(listener('y'), 2);
  assert.deepEqual(sent.slice(4), ['error x', 'add y']);
});

test("a start's sockets follow the start message, without listener_add, and wait for room as the worker reads them", async () => {
  const { queue, sent, read } = worker(2);
  // Any message stands for the start: the queue sends messages as they come.
  queue.send(remove('start'));
  for (const name of ['a', 'b', 'c']) queue.handOver(name, 10);
  queue.addListener(listener('d'), 11);
  assert.deepEqual(sent, ['listener_remove start', 'socket a', 'socket b']);
  read();
  await waitFor('c, then d with its listener_add', () => (sent.length === 6 ? true : undefined), 2000);
  assert.deepEqual(sent.slice(3), ['socket c', 'socket d', 'add d']);
});
