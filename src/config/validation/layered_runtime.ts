// layered_runtime: Envoy's rules for the layer list (LoaderImpl's constructor and ProtoLayer),
// by field path: unique names, at most one admin layer, static values that a runtime can hold,
// and an rtds_layer's config source as Envoy's subscription factory checks it. One specifier
// per layer is the protos' rule (proto_rules.ts).

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { flattenStaticLayer } from '../../runtime/static_layer';
import { type ConfigSourceContext, validateConfigSource } from './config_sources';

export function validateLayeredRuntime(bootstrap: JsonObject, context: ConfigSourceContext): void {
  const runtime = messageField(bootstrap, 'layered_runtime');
  if (runtime === undefined) return;
  const names = new Set<string>();
  let adminLayers = 0;
  messageList(runtime, 'layers').forEach((layer, i) => {
    const path = indexPath('layered_runtime.layers', i);
    const name = stringField(layer, 'name');
    if (names.has(name)) throw new FieldError(childPath(path, 'name'), `Duplicate layer name: ${name}`);
    names.add(name);
    if (layer['admin_layer'] !== undefined && ++adminLayers > 1) {
      throw new FieldError(childPath(path, 'admin_layer'), 'Too many admin layers specified in LayeredRuntime, at most one may be specified');
    }
    const staticLayer = messageField(layer, 'static_layer');
    if (staticLayer !== undefined) flattenStaticLayer(staticLayer, childPath(path, 'static_layer'));
    const rtds = messageField(layer, 'rtds_layer');
    if (rtds !== undefined) validateRtdsLayer(rtds, childPath(path, 'rtds_layer'), context);
  });
}

function validateRtdsLayer(rtds: JsonObject, path: string, context: ConfigSourceContext): void {
  const source = messageField(rtds, 'rtds_config');
  const sourcePath = childPath(path, 'rtds_config');
  // Envoy's subscription factory refuses a source with no specifier; an absent one is such a source.
  if (source === undefined) throw new FieldError(sourcePath, 'Missing config source specifier in envoy::config::core::v3::ConfigSource');
  validateConfigSource(source, sourcePath, context);
}
