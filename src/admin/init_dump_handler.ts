// GET /init_dump[?mask=listener]: envoy.admin.v3.UnreadyTargetsDumps, what the init managers
// still wait for. Listeners are this build's one component with an init phase: a listener is
// unready until the workers serve it. Once serving, nothing waits and the dump is `{}`.

import { AdminHandler, JSON_TYPE } from './admin_server';

export interface UnreadyTargets {
  readonly name: string;
  readonly target_names: readonly string[];
}

/** The components ?mask= can name (Envoy 1.16 knows the one). */
const COMPONENTS = ['listener'];

export function renderInitDump(unready: readonly UnreadyTargets[]): string {
  // Proto JSON leaves an empty list out.
  return `${JSON.stringify(unready.length === 0 ? {} : { unready_targets_dumps: unready }, null, 1)}\n`;
}

/** @param unreadyListeners the listeners' init managers that still wait, and for what */
export function initDumpHandler(unreadyListeners: () => readonly UnreadyTargets[]): AdminHandler {
  return {
    path: '/init_dump',
    help: 'dump current Proxy init manager information (experimental)',
    mutatesState: false,
    decodeQuery: true,
    params: [{ name: 'mask', help: 'only this component: listener', kind: 'choice', choices: COMPONENTS }],
    handle: (req) => {
      const mask = req.query.get('mask');
      if (mask !== undefined && !COMPONENTS.includes(mask)) {
        return { status: 400, body: `unknown mask '${mask}': the components are ${COMPONENTS.join(', ')}\n` };
      }
      return { status: 200, contentType: JSON_TYPE, body: renderInitDump(unreadyListeners()) };
    },
  };
}
