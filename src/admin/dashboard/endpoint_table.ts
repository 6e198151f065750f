// The home page's table of every endpoint the caller may use: links for reads, POST forms for
// mutations, a field per parameter. It works without script; the dashboard's script only adds
// the confirmation that a destructive form asks for (its `data-confirm`).

import type { AdminRole } from '../../config/model';
import type { AdminHandler, AdminParam } from '../admin_server';
import { requiredRole, roleAllows } from '../endpoint_roles';
import { escapeHtml } from './html_escape';

/** The mutations whose effect an operator cannot take back by another click: they ask first. */
const CONFIRMED: ReadonlyMap<string, string> = new Map([
  ['/quitquitquit', 'Shut the server down?'],
  ['/drain_listeners', 'Stop every listener from accepting connections?'],
  ['/healthcheck/fail', 'Fail inbound health checks (the server starts draining)?'],
  ['/reset_counters', 'Reset every counter to 0?'],
]);

const NO_QUERY: ReadonlyMap<string, string> = new Map();

/** One field; `form` ties it to a form in another cell of the row. */
function field(p: AdminParam, form: string | null): string {
  const owner = form === null ? '' : ` form='${form}'`;
  const name = escapeHtml(p.name);
  const title = ` title='${escapeHtml(p.help)}'`;
  let input: string;
  if (p.kind === 'flag') input = `<input type='checkbox' name='${name}'${owner}${title}>`;
  else if (p.kind === 'text') input = `<input type='text' name='${name}'${owner}${title}>`;
  else input = `<select name='${name}'${owner}${title}>${(p.choices ?? []).map((c) => `<option>${escapeHtml(c)}</option>`).join('')}</select>`;
  return `<label class='home-param'>${name} ${input}</label>`;
}

function row(h: AdminHandler): string {
  const target = escapeHtml(h.path.slice(1));
  const params = h.params ?? [];
  let command: string;
  let fields = '';
  if (h.mutatesState) {
    const id = `form-${target.replace(/[^A-Za-z0-9_-]/g, '-')}`;
    const question = CONFIRMED.get(h.path);
    const confirm = question === undefined ? '' : ` data-confirm='${escapeHtml(question)}'`;
    command = `<form action='${target}' method='post' class='home-form' id='${id}'${confirm}><button>${target}</button></form>`;
    fields = params.map((p) => field(p, id)).join('');
  } else {
    command = `<a href='${target}'>${target}</a>`;
    if (params.length > 0) {
      fields = `<form action='${target}' method='get' class='home-form'>${params.map((p) => field(p, null)).join('')}<button>${target}</button></form>`;
    }
  }
  return (
    `<tr class='home-row'><td class='home-data'>${command}</td><td class='home-data'>${escapeHtml(h.help)}</td>` +
    `<td class='home-data'>${fields}</td></tr>\n`
  );
}

/**
 * Envoy's home page table (links for reads, POST buttons for mutations, no leading slash), with
 * a column of parameters. `role` null (no admin.security) shows everything; otherwise a row the
 * role may not use is left out. Hiding is a courtesy: the server's role check is the protection.
 */
export function renderEndpointTable(handlers: readonly AdminHandler[], role: AdminRole | null): string {
  const rows = [...handlers]
    .filter((h) => h.path !== '/' && (role === null || roleAllows(role, requiredRole(h.path, NO_QUERY))))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map(row)
    .join('');
  return (
    "<table class='home-table'><thead><tr><th class='home-data'>Command</th><th class='home-data'>Description</th>" +
    "<th class='home-data'>Parameters</th></tr></thead><tbody>" +
    rows +
    '</tbody></table>'
  );
}
