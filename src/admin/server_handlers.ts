// /server_info, /ready and /quitquitquit.

import type { Options } from '../cli/options';
import type { ConfigExtensions } from '../config/extension';
import type { NodeInfo } from '../config/model';
import type { BuildInfo } from '../server/build_info';
import { renderServerInfoLine, ServerInfoSource } from '../server/server_state';
import { AdminHandler, JSON_TYPE } from './admin_server';
import { renderServerInfoJson } from './server_info_json';

export interface ServerHandlerDeps {
  readonly build: BuildInfo;
  readonly info: ServerInfoSource;
  readonly options: Options;
  /** The node after the --service-* overrides. */
  readonly node: NodeInfo;
  readonly localAddress: string;
  /** The extensions GET /server_info lists. */
  readonly extensions: ConfigExtensions;
  /** The compatibility string, or `disabled`. */
  readonly hotRestartVersion: string;
  readonly quit: () => void;
}

export function serverHandlers(deps: ServerHandlerDeps): AdminHandler[] {
  const { build, info } = deps;
  return [
    {
      path: '/server_info',
      help: 'print server version/status information',
      mutatesState: false,
      decodeQuery: false,
      // The spec's line of six fields; Envoy's ServerInfo JSON with ?format=json.
      handle: (req) =>
        req.query.get('format') === 'json'
          ? {
              status: 200,
              contentType: JSON_TYPE,
              body: renderServerInfoJson({
                build,
                state: info.state(),
                uptimeCurrentEpochS: info.uptimeCurrentEpoch(),
                uptimeAllEpochsS: info.uptimeAllEpochs(),
                hotRestartVersion: deps.hotRestartVersion,
                options: deps.options,
                node: deps.node,
                localAddress: deps.localAddress,
                extensions: deps.extensions,
              }),
            }
          : { status: 200, body: renderServerInfoLine(build.revision, build.buildMode, info) },
    },
    {
      path: '/ready',
      help: 'print server state, return 200 if LIVE, otherwise return 503',
      mutatesState: false,
      decodeQuery: false,
      handle: () => {
        const state = info.state();
        return { status: state === 'LIVE' ? 200 : 503, body: `${state}\n` };
      },
    },
    {
      path: '/hot_restart_version',
      help: 'print the hot restart compatibility version',
      mutatesState: false,
      decodeQuery: false,
      // Envoy prints it with no newline, so it compares equal to --hot-restart-version's output.
      handle: () => ({ status: 200, body: deps.hotRestartVersion }),
    },
    {
      path: '/quitquitquit',
      help: 'exit the server',
      mutatesState: true,
      decodeQuery: false,
      handle: () => ({ status: 200, body: 'OK\n', after: deps.quit }),
    },
  ];
}
