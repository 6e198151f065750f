// GET / (an HTML table of every endpoint) and GET /help (the same as text). The page runs no
// script: reads are links, mutations are POST forms (so no browser needs the GET compatibility
// path), and parameters are form fields. Its content security policy allows exactly its own
// style sheet (by hash), the empty inline icon, and forms posting back to the admin.

import { createHash } from 'node:crypto';
import { AdminHandler, AdminParam, helpText, HTML } from './admin_server';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const STYLE =
  '.home-table{font-family:sans-serif;border-collapse:collapse}' +
  '.home-data{padding:4px 12px;text-align:left;vertical-align:top}.home-row:nth-child(even){background:#f2f2f2}' +
  '.home-form{margin:0}.home-param{margin-right:12px;white-space:nowrap}';

/** The page's content-security-policy: its one style block by hash, nothing else loads. */
export function homeCsp(): string {
  const styleHash = createHash('sha256').update(STYLE).digest('base64');
  return `default-src 'none'; style-src 'sha256-${styleHash}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

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
    command = `<form action='${target}' method='post' class='home-form' id='${id}'><button>${target}</button></form>`;
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

/** Envoy's home page shape (links for reads, POST buttons for mutations, no leading slash), with a column of parameters. */
export function renderHome(handlers: readonly AdminHandler[]): string {
  const rows = [...handlers]
    .filter((h) => h.path !== '/')
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map(row)
    .join('');
  return (
    `<head><title>Proxy Admin</title><link rel='icon' href='data:,'><style>${STYLE}</style></head>` +
    "<body><table class='home-table'><thead><th class='home-data'>Command</th><th class='home-data'>Description</th>" +
    "<th class='home-data'>Parameters</th></thead><tbody>" +
    rows +
    '</tbody></table></body>'
  );
}

/** `all` is read at request time so that the page lists every registered handler. */
export function homeHandlers(all: () => readonly AdminHandler[]): AdminHandler[] {
  const csp = homeCsp();
  return [
    {
      path: '/',
      help: 'Admin home page',
      mutatesState: false,
      decodeQuery: false,
      handle: () => ({ status: 200, body: renderHome(all()), contentType: HTML, headers: { 'content-security-policy': csp } }),
    },
    {
      path: '/help',
      help: 'print out list of admin commands',
      mutatesState: false,
      decodeQuery: false,
      handle: () => ({ status: 200, body: helpText(all()) }),
    },
  ];
}
