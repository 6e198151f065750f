// Bootstrap.overload_manager through loadBootstrap: the model (names in our spelling, triggers by
// monitor, Envoy's refresh_interval default), and what is refused, each by its field path.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

type Json = Record<string, any>;

const FIXED_HEAP = {
  name: 'envoy.resource_monitors.fixed_heap',
  typed_config: { '@type': 'type.googleapis.com/envoy.config.resource_monitor.fixed_heap.v2alpha.FixedHeapConfig', max_heap_size_bytes: '2147483648' },
};
const INJECTED = {
  name: 'envoy.resource_monitors.injected_resource',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig', filename: '/tmp/pressure' },
};

function manager(): Json {
  return {
    refresh_interval: '0.25s',
    resource_monitors: [structuredClone(FIXED_HEAP), structuredClone(INJECTED)],
    actions: [
      { name: 'envoy.overload_actions.disable_http_keepalive', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.95 } }] },
      {
        name: 'envoy.overload_actions.stop_accepting_requests',
        triggers: [
          { name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.99 } },
          { name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.5 } },
        ],
      },
    ],
  };
}

function load(overloadManager: Json) {
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump({ overload_manager: overloadManager }), allowUnknownStaticFields: false }).bootstrap;
}

test('overload_manager loads into the model: monitors and actions in our spelling, triggers by monitor', () => {
  assert.deepEqual(load(manager()).overloadManager, {
    refreshIntervalMs: 250,
    resourceMonitors: [
      { kind: 'fixed_heap', name: 'proxy.resource_monitors.fixed_heap', maxHeapSizeBytes: 2147483648 },
      { kind: 'injected_resource', name: 'proxy.resource_monitors.injected_resource', filename: '/tmp/pressure' },
    ],
    actions: [
      { name: 'proxy.overload_actions.disable_http_keepalive', kind: 'disable_http_keepalive', triggers: [{ monitor: 0, threshold: 0.95 }] },
      {
        name: 'proxy.overload_actions.stop_accepting_requests',
        kind: 'stop_accepting_requests',
        triggers: [
          { monitor: 0, threshold: 0.99 },
          { monitor: 1, threshold: 0.5 },
        ],
      },
    ],
  });
  const defaults = manager();
  delete defaults.refresh_interval;
  assert.equal(load(defaults).overloadManager?.refreshIntervalMs, 1000);
  assert.equal(loadBootstrap({ extensions: builtinExtensions(), configYaml: '{}', allowUnknownStaticFields: false }).bootstrap.overloadManager, null);
});

const refused: [string, (m: Json) => void, RegExp][] = [
  ['an unknown monitor', (m) => (m.resource_monitors[1] = { name: 'envoy.resource_monitors.nope' }), /overload_manager\.resource_monitors\[1\]\.name: Didn't find a registered implementation for name: 'proxy\.resource_monitors\.nope'/],
  ['a monitor twice', (m) => m.resource_monitors.push(structuredClone(FIXED_HEAP)), /overload_manager\.resource_monitors\[2\]\.name: Duplicate resource monitor proxy\.resource_monitors\.fixed_heap/],
  ['a monitor of the wrong type', (m) => (m.resource_monitors[0].typed_config = INJECTED.typed_config), /overload_manager\.resource_monitors\[0\]\.typed_config\.@type: expected type envoy\.extensions\.resource_monitors\.fixed_heap\.v3\.FixedHeapConfig/],
  ['max_heap_size_bytes 0', (m) => (m.resource_monitors[0].typed_config.max_heap_size_bytes = '0'), /overload_manager\.resource_monitors\[0\]\.typed_config\.max_heap_size_bytes/],
  ['an action this build does not act on', (m) => (m.actions[0].name = 'envoy.overload_actions.reduce_timeouts'), /overload_manager\.actions\[0\]\.name: overload action 'envoy\.overload_actions\.reduce_timeouts' is not implemented by this build \(it would be ignored\)/],
  ['an action twice', (m) => (m.actions[1].name = 'proxy.overload_actions.disable_http_keepalive'), /overload_manager\.actions\[1\]\.name: Duplicate overload action proxy\.overload_actions\.disable_http_keepalive/],
  ['a trigger naming no monitor', (m) => (m.actions[0].triggers[0].name = 'envoy.resource_monitors.other'), /overload_manager\.actions\[0\]\.triggers\[0\]\.name: Unknown trigger resource envoy\.resource_monitors\.other for overload action/],
  ['a monitor triggering an action twice', (m) => m.actions[0].triggers.push({ name: 'proxy.resource_monitors.fixed_heap', threshold: { value: 0.5 } }), /overload_manager\.actions\[0\]\.triggers\[1\]\.name: Duplicate trigger resource for overload action/],
  ['a threshold over 1', (m) => (m.actions[0].triggers[0].threshold.value = 1.5), /overload_manager\.actions\[0\]\.triggers\[0\]\.threshold\.value/],
  ['a scaled trigger', (m) => (m.actions[0].triggers[0] = { name: 'envoy.resource_monitors.fixed_heap', scaled: { scaling_threshold: 0.5, saturation_threshold: 0.9 } }), /overload_manager\.actions\[0\]\.triggers\[0\]\.scaled: scaled is not implemented by this build yet \(it would be ignored\)/],
  ['buffer_factory_config', (m) => (m.buffer_factory_config = { minimum_account_to_track_power_of_two: 20 }), /overload_manager\.buffer_factory_config: buffer_factory_config is not implemented by this build yet/],
  ['no monitor', (m) => (m.resource_monitors = []), /overload_manager\.resource_monitors/],
];

for (const [what, mutate, message] of refused) {
  test(`overload_manager refuses ${what}, by its field path`, () => {
    const m = manager();
    mutate(m);
    assert.throws(() => load(m), message);
  });
}
