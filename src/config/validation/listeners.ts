// Listeners: address, filter chains, and the network filters in them.

import type { ValidationContext } from '../extension';
import { FieldError, FieldErrorCollector } from '../errors';
import { filterChains } from '../extension_sites';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, stringField } from '../json';
import { terminalFilterNotLast, unknownExtension, validateConfigOf, validateExtension } from './extensions';
import { validateSocketAddress } from './socket_address';

/** @param context the static clusters' names, which filters may route to, and the registry */
export function validateListeners(bootstrap: JsonObject, context: ValidationContext, errors: FieldErrorCollector): void {
  const names = new Set<string>();
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  messageList(resources, 'listeners').forEach((listener, i) => errors.run(() => validateListener(listener, i, names, context)));
}

function validateListener(listener: JsonObject, i: number, names: Set<string>, context: ValidationContext): void {
  const path = indexPath('static_resources.listeners', i);
  // An unnamed listener gets a generated, unique name.
  const name = stringField(listener, 'name');
  if (name !== '' && names.has(name)) throw new FieldError(childPath(path, 'name'), `duplicate listener name '${name}'`);
  names.add(name);
  validateSocketAddress(messageField(listener, 'address'), childPath(path, 'address'), 'ip');
  messageList(listener, 'listener_filters').forEach((filter, k) => {
    validateExtension('proxy.filters.listener', filter, indexPath(childPath(path, 'listener_filters'), k), context);
  });
  const chains = filterChains(listener, path);
  if (chains.length === 0) throw new FieldError(childPath(path, 'filter_chains'), 'no filter chains specified');
  for (const [chain, chainPath] of chains) {
    validateNetworkFilters(chain, chainPath, context);
    const socket = messageField(chain, 'transport_socket');
    if (socket !== undefined) validateExtension('proxy.transport_sockets.downstream', socket, childPath(chainPath, 'transport_socket'), context);
  }
}

/** Every network filter of this build is terminal: a chain holds exactly one, last. */
function validateNetworkFilters(chain: JsonObject, chainPath: string, context: ValidationContext): void {
  const filtersPath = childPath(chainPath, 'filters');
  const filters = messageList(chain, 'filters');
  if (filters.length === 0) {
    const names = context.extensions.of('proxy.filters.network').map((e) => e.name);
    throw new FieldError(filtersPath, `a filter chain needs a terminal filter: ${names.join(' or ')}`);
  }
  filters.forEach((filter, k) => {
    const filterPath = indexPath(filtersPath, k);
    const name = stringField(filter, 'name');
    const descriptor = context.extensions.get('proxy.filters.network', name);
    if (descriptor === undefined) throw new FieldError(childPath(filterPath, 'name'), unknownExtension(name));
    if (k < filters.length - 1) throw new FieldError(childPath(filterPath, 'name'), terminalFilterNotLast(name, 'network'));
    validateConfigOf(descriptor, filter, filterPath, context);
  });
}
