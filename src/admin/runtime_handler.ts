// GET /runtime and POST /runtime_modify (Envoy's runtime_handler): every layer's value of every
// key, and the admin layer's changes.

import type { LoadedLayer } from '../runtime/layered_runtime';
import { NoAdminLayerError } from '../runtime/runtime_loader';
import { AdminHandler, AdminRequest, AdminResponse, JSON_TYPE } from './admin_server';

/** What the handlers need of the supervisor's runtime. */
export interface RuntimeAdmin {
  layers(): readonly LoadedLayer[];
  /** @throws NoAdminLayerError */
  modify(updates: Iterable<readonly [string, string]>): void;
}

const USAGE =
  'usage: /runtime_modify?key1=value1&key2=value2&keyN=valueN\n' +
  '       or send the parameters as form values\n' +
  'use an empty value to remove a previously added override';

interface RuntimeEntryJson {
  final_value: string;
  layer_values: string[];
}

/** The spec's record: `layers`, and per key one value per layer ('' when absent) and the last non-empty. */
export function renderRuntimeJson(layers: readonly LoadedLayer[]): string {
  const entries = new Map<string, RuntimeEntryJson>();
  layers.forEach((layer, i) => {
    for (const [key, value] of layer.values) {
      let entry = entries.get(key);
      if (entry === undefined) {
        entry = { final_value: '', layer_values: layers.map(() => '') };
        entries.set(key, entry);
      }
      entry.layer_values[i] = value;
    }
  });
  for (const entry of entries.values()) entry.final_value = [...entry.layer_values].reverse().find((v) => v !== '') ?? '';
  const sorted = Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${JSON.stringify({ layers: layers.map((l) => l.name), entries: sorted }, null, 1)}\n`;
}

export function runtimeHandlers(runtime: RuntimeAdmin): AdminHandler[] {
  return [
    {
      path: '/runtime',
      help: 'print runtime values',
      mutatesState: false,
      decodeQuery: true,
      handle: () => ({ status: 200, contentType: JSON_TYPE, body: renderRuntimeJson(runtime.layers()) }),
    },
    {
      path: '/runtime_modify',
      help: 'modify runtime values',
      mutatesState: true,
      decodeQuery: true,
      handle: (req) => modify(runtime, req),
    },
  ];
}

function modify(runtime: RuntimeAdmin, req: AdminRequest): AdminResponse {
  // A form body without a query is the query already (the admin server's rule for every POST).
  if (req.query.size === 0) return { status: 400, body: USAGE };
  try {
    runtime.modify(req.query);
  } catch (e) {
    if (e instanceof NoAdminLayerError) return { status: 503, body: e.message };
    throw e;
  }
  return { status: 200, body: 'OK\n' };
}
