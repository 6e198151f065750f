// The xDS resource types this build subscribes to: their type URLs in each API version, and the
// field that names a resource.

import type { XdsApiVersion } from '../config_source';

export interface ResourceType {
  /** The v3 message, Envoy's package name. */
  readonly v3TypeName: string;
  readonly v2TypeName: string;
  /** The field of the resource that is its name. */
  readonly nameField: string;
}

export const CLUSTER_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.config.cluster.v3.Cluster',
  v2TypeName: 'envoy.api.v2.Cluster',
  nameField: 'name',
};

export const ENDPOINT_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
  v2TypeName: 'envoy.api.v2.ClusterLoadAssignment',
  nameField: 'cluster_name',
};

/** A runtime layer (RTDS); v2's type lived in the discovery package. */
export const RUNTIME_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.service.runtime.v3.Runtime',
  v2TypeName: 'envoy.service.discovery.v2.Runtime',
  nameField: 'name',
};

export const LISTENER_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.config.listener.v3.Listener',
  v2TypeName: 'envoy.api.v2.Listener',
  nameField: 'name',
};

export const ROUTE_CONFIGURATION_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.config.route.v3.RouteConfiguration',
  v2TypeName: 'envoy.api.v2.RouteConfiguration',
  nameField: 'name',
};

export const SECRET_RESOURCE: ResourceType = {
  v3TypeName: 'envoy.extensions.transport_sockets.tls.v3.Secret',
  v2TypeName: 'envoy.api.v2.auth.Secret',
  nameField: 'name',
};

/** The type URL a subscription asks for: resource_api_version decides (AUTO is V2 in Envoy 1.16). */
export function resourceTypeUrl(type: ResourceType, version: XdsApiVersion): string {
  return `type.googleapis.com/${version === 'V3' ? type.v3TypeName : type.v2TypeName}`;
}
