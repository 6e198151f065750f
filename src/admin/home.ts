// GET / (an HTML table of every endpoint) and GET /help (the same as text).

import { AdminHandler, helpText, HTML } from './admin_server';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Envoy's home page shape: links for reads, POST buttons for mutations, no leading slash. */
export function renderHome(handlers: readonly AdminHandler[]): string {
  const rows = [...handlers]
    .filter((h) => h.path !== '/')
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((h) => {
      const target = escapeHtml(h.path.slice(1));
      const link = h.mutatesState
        ? `<form action='${target}' method='post' class='home-form'><button>${target}</button></form>`
        : `<a href='${target}'>${target}</a>`;
      return `<tr class='home-row'><td class='home-data'>${link}</td><td class='home-data'>${escapeHtml(h.help)}</td></tr>\n`;
    })
    .join('');
  return (
    "<head><title>Proxy Admin</title><style>.home-table{font-family:sans-serif;border-collapse:collapse}" +
    '.home-data{padding:4px 12px;text-align:left}.home-row:nth-child(even){background:#f2f2f2}' +
    '.home-form{margin:0}</style></head>' +
    "<body><table class='home-table'><thead><th class='home-data'>Command</th><th class='home-data'>Description</th></thead><tbody>" +
    rows +
    '</tbody></table></body>'
  );
}

/** `all` is read at request time so that the page lists every registered handler. */
export function homeHandlers(all: () => readonly AdminHandler[]): AdminHandler[] {
  return [
    {
      path: '/',
      help: 'Admin home page',
      mutatesState: false,
      decodeQuery: false,
      handle: () => ({ status: 200, body: renderHome(all()), contentType: HTML }),
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
