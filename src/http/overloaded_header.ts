// Envoy's x-envoy-overloaded: marks a local 503 the proxy gave for want of capacity (a circuit
// breaker's overflow, the overload manager's stop_accepting_requests) rather than an upstream's.

export const OVERLOADED_HEADER: readonly string[] = ['x-proxy-overloaded', 'true'];
