// Which methods an admin endpoint answers. A mutation wants POST; the spec keeps GET working
// for a while, with a warning. Anything else (HEAD, OPTIONS: a browser's CORS preflight, DELETE)
// must never run it. Reads answer GET and HEAD, and POST as Envoy does (it serves reads on any
// method; a POST changes nothing there); other methods are refused so that none of them is
// mistaken for having done something.

export type MethodVerdict =
  | { readonly kind: 'run' }
  | { readonly kind: 'run_deprecated' }
  | { readonly kind: 'refuse'; readonly allow: string; readonly reason: string };

const READ_METHODS = new Set(['GET', 'HEAD', 'POST']);

export function methodVerdict(method: string, mutates: boolean): MethodVerdict {
  if (mutates) {
    if (method === 'POST') return { kind: 'run' };
    if (method === 'GET') return { kind: 'run_deprecated' };
    // Envoy's wording; GET is not advertised in `allow` since it is on its way out.
    return { kind: 'refuse', allow: 'POST', reason: `Method ${method} not allowed, POST required.\n` };
  }
  if (READ_METHODS.has(method)) return { kind: 'run' };
  return { kind: 'refuse', allow: 'GET, HEAD, POST', reason: `Method ${method} not allowed, GET required.\n` };
}
