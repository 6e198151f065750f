// GET / (the operator dashboard: server state, clusters, listeners, stats, charts, runtime, and
// the table of endpoints), its script and style sheet, and GET /help (the endpoints as text).
// The page is rendered per request for the caller's role; its script and style are constants
// served from the admin itself, since its content security policy allows nothing inline.

import { AdminHandler, helpText, HTML } from './admin_server';
import { DASHBOARD_CSP, renderDashboardPage } from './dashboard/dashboard_page';
import { dashboardScript } from './dashboard/dashboard_script';
import { DASHBOARD_CSS } from './dashboard/dashboard_style';

/** `all` is read at request time so that the page lists every registered handler. */
export function homeHandlers(all: () => readonly AdminHandler[]): AdminHandler[] {
  const script = dashboardScript();
  return [
    {
      path: '/',
      help: 'Admin home page',
      mutatesState: false,
      decodeQuery: false,
      handle: (req) => ({ status: 200, body: renderDashboardPage(all(), req.role), contentType: HTML, headers: { 'content-security-policy': DASHBOARD_CSP } }),
    },
    {
      path: '/dashboard.js',
      help: "the home page's script",
      mutatesState: false,
      decodeQuery: false,
      handle: () => ({ status: 200, body: script, contentType: 'text/javascript; charset=UTF-8' }),
    },
    {
      path: '/dashboard.css',
      help: "the home page's style sheet",
      mutatesState: false,
      decodeQuery: false,
      handle: () => ({ status: 200, body: DASHBOARD_CSS, contentType: 'text/css; charset=UTF-8' }),
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
