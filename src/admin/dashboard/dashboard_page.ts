// GET /'s HTML: the dashboard's frame (sections the script fills from the admin's JSON) and the
// table of endpoints, rendered per request for the caller's role. No inline script or style:
// both load from the admin itself, which is all the content security policy allows.

import type { AdminRole } from '../../config/model';
import type { AdminHandler } from '../admin_server';
import { renderEndpointTable } from './endpoint_table';

/** How often the page polls the admin; the page carries it so that the script and tests read one value. */
export const REFRESH_MS = 2000;

/** Scripts and styles from the admin's origin only; the page's polls go back to it; nothing frames it. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function section(id: string, title: string, body: string): string {
  return `<section id='${id}'><h2>${title}</h2>${body}</section>`;
}

function chart(id: string, title: string): string {
  return `<figure class='dash-chart'><figcaption class='dash-chart-title'>${title}</figcaption><svg id='${id}' width='420' height='160' role='img' aria-label='${title}'></svg></figure>`;
}

export function renderDashboardPage(handlers: readonly AdminHandler[], role: AdminRole | null): string {
  return (
    "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Proxy Admin</title><link rel='icon' href='data:,'>" +
    "<link rel='stylesheet' href='dashboard.css'><script src='dashboard.js' defer></script></head><body>" +
    "<header class='dash-header'><h1>Proxy Admin</h1><span id='dash-status' class='dash-status'>loading</span></header>" +
    `<main id='dashboard' data-refresh-ms='${REFRESH_MS}'>` +
    section('server', 'Server', "<dl id='server-facts' class='dash-facts'></dl>") +
    section(
      'traffic',
      'Traffic',
      "<div class='dash-controls'><label>latency of <select id='latency-histogram'></select></label>" +
        "<span class='dash-note'>the last minutes, kept by this page while it is open</span></div><div class='dash-charts'>" +
        chart('chart-rq', 'downstream requests/s') +
        chart('chart-5xx', 'downstream 5xx/s') +
        chart('chart-latency', 'latency quantiles (ms): p50, p90, p99') +
        '</div>',
    ) +
    section(
      'clusters',
      'Clusters',
      "<table id='clusters-table' class='dash-table'><thead><tr><th>cluster</th><th>host</th><th>health</th><th class='dash-num'>weight</th>" +
        "<th class='dash-num'>rq/s</th><th class='dash-num'>success rate</th></tr></thead><tbody></tbody></table>",
    ) +
    section('listeners', 'Listeners', "<table id='listeners-table' class='dash-table'><thead><tr><th>name</th><th>address</th></tr></thead><tbody></tbody></table>") +
    section(
      'stats',
      'Stats',
      "<div class='dash-controls'><input id='stats-search' type='search' placeholder='name contains' aria-label='search stats'>" +
        "<label><input id='stats-nonzero' type='checkbox'> non-zero only</label><span id='stats-count' class='dash-note'></span></div>" +
        "<table id='stats-table' class='dash-table'><thead><tr><th>name</th><th class='dash-num'>value</th></tr></thead><tbody></tbody></table>",
    ) +
    section('runtime', 'Runtime', "<table id='runtime-table' class='dash-table'><thead><tr><th>key</th><th>value</th></tr></thead><tbody></tbody></table>") +
    section('endpoints', 'Endpoints', renderEndpointTable(handlers, role)) +
    '</main></body></html>'
  );
}
