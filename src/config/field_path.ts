// Field paths in the spelling operators write and error messages print:
// `static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[1].endpoint`.

export function childPath(parent: string, field: string): string {
  return parent === '' ? field : `${parent}.${field}`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** Map entries are addressed by their key, quoted because keys often contain dots. */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${JSON.stringify(key)}]`;
}

/** `relative` (a path inside the message at `parent`, possibly starting with an index) below `parent`. */
export function joinPath(parent: string, relative: string): string {
  if (relative === '') return parent;
  return relative.startsWith('[') ? `${parent}${relative}` : childPath(parent, relative);
}
