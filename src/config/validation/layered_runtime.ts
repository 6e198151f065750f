// layered_runtime: Envoy's rules for the layer list (LoaderImpl's constructor and ProtoLayer),
// by field path: unique names, at most one admin layer, and static values that a runtime can
// hold. One specifier per layer is the protos' rule (proto_rules.ts).

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { flattenStaticLayer } from '../../runtime/static_layer';

export function validateLayeredRuntime(bootstrap: JsonObject): void {
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
  });
}
