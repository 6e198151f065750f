// What an RTDS update must be to become a layer's values (Envoy's RtdsSubscription checks): one
// Runtime resource, the one the layer subscribes to, whose `layer` Struct a runtime can hold. The
// Struct flattens exactly as a static layer does. Pure.

import { FieldError } from '../config/errors';
import { childPath, indexPath } from '../config/field_path';
import { messageField } from '../config/json';
import type { ProtoSchema } from '../config/schema';
import { checkMessageProtoRules } from '../config/validation/proto_rules';
import { RUNTIME_RESOURCE } from '../config/xds/resource_types';
import type { DecodedResource } from '../config/xds/subscription';
import type { RuntimeValues } from './runtime';
import { flattenStaticLayer } from './static_layer';

/**
 * @param resourceName rtds_layer.name
 * @throws FieldError at the field at fault (`resources[0].name`, `resources[0].layer.<key>`), or
 *   an Error with Envoy's message when the update does not hold exactly one resource
 */
export function rtdsLayerValues(schema: ProtoSchema, resources: readonly DecodedResource[], resourceName: string): RuntimeValues {
  if (resources.length !== 1) throw new Error(`Unexpected RTDS resource length: ${resources.length}`);
  const path = indexPath('resources', 0);
  const { name, resource } = resources[0]!;
  checkMessageProtoRules(schema, RUNTIME_RESOURCE.v3TypeName, resource, path);
  if (name !== resourceName) throw new FieldError(childPath(path, 'name'), `Unexpected RTDS runtime (expecting ${resourceName}): ${name}`);
  const layer = messageField(resource, 'layer');
  return layer === undefined ? [] : flattenStaticLayer(layer, childPath(path, 'layer'));
}
