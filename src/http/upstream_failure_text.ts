// The bodies of Envoy's router's local replies when no upstream answers: the router and the
// async client (which Envoy runs through a router) answer alike.

export const NO_HEALTHY_UPSTREAM = 'no healthy upstream';
export const UPSTREAM_REQUEST_TIMEOUT = 'upstream request timeout';
/** Followed by the reset reason. */
export const UPSTREAM_RESET_PREFIX = 'upstream connect error or disconnect/reset before headers. reset reason: ';
