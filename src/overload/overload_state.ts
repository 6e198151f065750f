// What a worker's overload manager has turned on, as the data path reads it: one boolean per
// action, so that a request pays a property read while nothing is active.

export class OverloadState {
  /** proxy.overload_actions.stop_accepting_requests: new requests get a 503 local reply. */
  stopAcceptingRequests = false;
  /** proxy.overload_actions.disable_http_keepalive: each HTTP/1 response closes its connection. */
  disableHttpKeepalive = false;
}
