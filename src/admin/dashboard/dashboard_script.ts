/// <reference lib="dom" />
// The dashboard's browser code, served as /dashboard.js. It is written here, in one function,
// so that tsc checks it against the DOM's types with the rest of the tree and no bundler is
// needed: the admin sends that function's compiled source as the script. So the function must
// name nothing outside itself (no imports, no module-level names); everything is nested in it.
// The `reference lib` above gives the whole program the DOM's declarations; server code has no
// `document` at run time whatever tsc allows, and the tests run it there.
//
// The page polls JSON the admin already serves, every `data-refresh-ms`, only while it is
// visible; the charts' history lives in the page, so an admin with no browser open does nothing.

export function dashboardMain(): void {
  interface StatJson {
    readonly name: string;
    readonly value?: number;
  }
  interface QuantilesJson {
    readonly name: string;
    readonly values: readonly { readonly interval: number | null; readonly cumulative: number | null }[];
  }
  interface HistogramsJson {
    readonly supported_quantiles: readonly number[];
    readonly computed_quantiles: readonly QuantilesJson[];
  }
  interface StatsJson {
    readonly stats: readonly (StatJson & { readonly histograms?: HistogramsJson })[];
  }
  interface AddressJson {
    readonly socket_address?: { readonly address: string; readonly port_value?: number };
    readonly pipe?: { readonly path: string };
  }
  interface HostJson {
    readonly address: AddressJson;
    readonly stats: readonly { readonly name: string; readonly value?: string }[];
    readonly health_status: Readonly<Record<string, unknown>>;
    readonly weight?: number;
    readonly success_rate?: { readonly value: number };
  }
  interface ClustersJson {
    readonly cluster_statuses?: readonly { readonly name: string; readonly host_statuses?: readonly HostJson[] }[];
  }
  interface ListenersJson {
    readonly listener_statuses?: readonly { readonly name: string; readonly local_address?: AddressJson }[];
  }
  interface RuntimeJson {
    readonly entries: Readonly<Record<string, { readonly final_value?: string }>>;
  }
  interface HostCounters {
    readonly total: number;
    readonly success: number;
    readonly error: number;
  }
  /** What the previous poll saw, for rates. */
  interface Previous {
    readonly at: number;
    readonly requests: number;
    readonly errors5xx: number;
    readonly hosts: ReadonlyMap<string, HostCounters>;
  }
  interface Sample {
    readonly at: number;
    readonly rqPerSecond: number | null;
    readonly errorsPerSecond: number | null;
    /** Per histogram, the last interval's QUANTILES (null: no sample in the interval). */
    readonly latency: ReadonlyMap<string, readonly (number | null)[]>;
  }

  const HISTORY_MS = 5 * 60_000;
  const QUANTILES = [50, 90, 99];
  /** More rows than this make the page slow to redraw every refresh: the search narrows them. */
  const STATS_ROWS = 500;
  const SVG = 'http://www.w3.org/2000/svg';
  /** admin.v3.HostHealthStatus flags, by the names /clusters' text gives them. */
  const FLAG_NAMES: ReadonlyArray<readonly [string, string]> = [
    ['failed_active_health_check', 'failed_active_hc'],
    ['failed_outlier_check', 'failed_outlier_check'],
    ['failed_active_degraded_check', 'degraded_active_hc'],
    ['pending_dynamic_removal', 'pending_dynamic_removal'],
    ['pending_active_hc', 'pending_active_hc'],
  ];
  const UNHEALTHY_FLAGS = new Set(['failed_active_hc', 'failed_outlier_check', 'failed_eds_health']);

  function byId<T extends Element>(id: string): T {
    const found = document.getElementById(id);
    if (found === null) throw new Error(`the page has no #${id}`);
    return found as unknown as T;
  }

  const root = byId<HTMLElement>('dashboard');
  const refreshMs = Number(root.dataset.refreshMs);
  const status = byId<HTMLElement>('dash-status');
  const latencySelect = byId<HTMLSelectElement>('latency-histogram');
  const statsSearch = byId<HTMLInputElement>('stats-search');
  const statsNonZero = byId<HTMLInputElement>('stats-nonzero');
  const history: Sample[] = [];
  let previous: Previous | null = null;
  let latestStats: StatsJson['stats'] = [];
  let timer: number | undefined;
  let polling = false;

  function element<K extends keyof HTMLElementTagNameMap>(tag: K, text = '', className = ''): HTMLElementTagNameMap[K] {
    const e = document.createElement(tag);
    e.textContent = text;
    if (className !== '') e.className = className;
    return e;
  }

  function svg(tag: string, attributes: Readonly<Record<string, string | number>>, text = ''): SVGElement {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, String(v));
    e.textContent = text;
    return e;
  }

  function row(cells: readonly (string | HTMLElement)[], numericFrom = cells.length): HTMLTableRowElement {
    const tr = element('tr');
    cells.forEach((c, i) => {
      const td = element('td', '', i >= numericFrom ? 'dash-num' : '');
      if (typeof c === 'string') td.textContent = c;
      else td.append(c);
      tr.append(td);
    });
    return tr;
  }

  function fillTable(id: string, rows: readonly HTMLTableRowElement[], empty: string): void {
    const body = byId<HTMLTableElement>(id).tBodies[0]!;
    body.replaceChildren(...(rows.length > 0 ? rows : [row([empty])]));
  }

  function formatNumber(n: number): string {
    if (!Number.isFinite(n)) return '–';
    return Math.abs(n) >= 100 || Number.isInteger(n) ? n.toFixed(0) : n.toFixed(2);
  }

  function formatDuration(seconds: number): string {
    const d = Math.floor(seconds / 86400);
    const h = Math.floor((seconds % 86400) / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = Math.floor(seconds % 60);
    return (d > 0 ? `${d}d ` : '') + (d + h > 0 ? `${h}h ` : '') + (d + h + m > 0 ? `${m}m ` : '') + `${s}s`;
  }

  function formatAddress(a: AddressJson | undefined): string {
    if (a?.socket_address !== undefined) {
      const ip = a.socket_address.address;
      return `${ip.includes(':') ? `[${ip}]` : ip}:${a.socket_address.port_value ?? 0}`;
    }
    return a?.pipe?.path ?? '?';
  }

  async function get(path: string): Promise<string> {
    const r = await fetch(path, { cache: 'no-store', credentials: 'same-origin' });
    const body = await r.text();
    if (!r.ok) throw new Error(`${path}: ${r.status} ${body.trim()}`);
    return body;
  }

  async function getJson<T>(path: string): Promise<T> {
    return JSON.parse(await get(path)) as T;
  }

  /** The sum of `http.<prefix>.<suffix>` over every connection manager but the admin's own (these polls). */
  function downstreamSum(counters: ReadonlyMap<string, number>, suffix: string): number {
    let sum = 0;
    for (const [name, value] of counters) {
      if (name.startsWith('http.') && name.endsWith(`.${suffix}`) && !name.startsWith('http.admin.')) sum += value;
    }
    return sum;
  }

  function rate(now: number, before: number, seconds: number): number {
    // A /reset_counters between two polls would make it negative.
    return Math.max(0, now - before) / seconds;
  }

  function renderServer(info: string, counters: ReadonlyMap<string, number>): void {
    // `proxy <revision>/<build> <live|draining> <uptime of this epoch> <total uptime> <epoch>`
    const [, version = '?', state = '?', uptime = '0', uptimeAll = '0', epoch = '?'] = info.trim().split(/\s+/);
    const facts: [string, string][] = [
      ['state', state],
      ['version', version],
      ['uptime', `${formatDuration(Number(uptime))} (all epochs ${formatDuration(Number(uptimeAll))})`],
      ['restart epoch', epoch],
      ['hot restart generation', String(counters.get('server.hot_restart_generation') ?? '?')],
      ['workers', String(counters.get('server.concurrency') ?? '?')],
    ];
    byId<HTMLElement>('server-facts').replaceChildren(...facts.flatMap(([k, v]) => [element('dt', k), element('dd', v, `fact-${k.replace(/ /g, '-')}`)]));
  }

  function hostHealth(h: HostJson): { text: string; unhealthy: boolean } {
    const flags = FLAG_NAMES.filter(([field]) => h.health_status[field] === true).map(([, name]) => name);
    const eds = h.health_status.eds_health_status;
    if (eds === 'UNHEALTHY') flags.push('failed_eds_health');
    if (eds === 'DEGRADED') flags.push('degraded_eds_health');
    const unhealthy = flags.some((f) => UNHEALTHY_FLAGS.has(f));
    if (flags.length === 0) return { text: 'healthy', unhealthy };
    return { text: `${unhealthy ? 'unhealthy' : 'healthy'}: ${flags.join(', ')}`, unhealthy };
  }

  function renderClusters(clusters: ClustersJson, seconds: number | null): Map<string, HostCounters> {
    const seen = new Map<string, HostCounters>();
    const rows: HTMLTableRowElement[] = [];
    for (const c of clusters.cluster_statuses ?? []) {
      const hosts = c.host_statuses ?? [];
      if (hosts.length === 0) rows.push(row([c.name, 'no hosts', '', '', '', '']));
      for (const h of hosts) {
        const address = formatAddress(h.address);
        const stat = (name: string) => Number(h.stats.find((s) => s.name === name)?.value ?? 0);
        const counters = { total: stat('rq_total'), success: stat('rq_success'), error: stat('rq_error') };
        const key = `${c.name} ${address}`;
        seen.set(key, counters);
        const before = previous?.hosts.get(key);
        let rqPerSecond = '–';
        let successRate = '–';
        if (before !== undefined && seconds !== null) {
          rqPerSecond = formatNumber(rate(counters.total, before.total, seconds));
          const ok = Math.max(0, counters.success - before.success);
          const failed = Math.max(0, counters.error - before.error);
          if (ok + failed > 0) successRate = `${formatNumber((100 * ok) / (ok + failed))}%`;
        }
        // Outlier detection's own figure, when it computes one, is the one it ejects by.
        if (h.success_rate !== undefined) successRate = `${formatNumber(h.success_rate.value)}%`;
        const health = hostHealth(h);
        const healthCell = element('span', health.text, health.unhealthy ? 'host-unhealthy' : 'host-healthy');
        healthCell.dataset.health = health.unhealthy ? 'unhealthy' : 'healthy';
        const tr = row([c.name, address, healthCell, String(h.weight ?? 1), rqPerSecond, successRate], 3);
        tr.dataset.host = key;
        rows.push(tr);
      }
    }
    fillTable('clusters-table', rows, 'no clusters');
    return seen;
  }

  function renderListeners(listeners: ListenersJson): void {
    const rows = (listeners.listener_statuses ?? []).map((l) => row([l.name, formatAddress(l.local_address)]));
    fillTable('listeners-table', rows, 'no listeners');
  }

  function renderRuntime(runtime: RuntimeJson): void {
    const rows = Object.keys(runtime.entries)
      .sort()
      .map((k) => row([k, runtime.entries[k]!.final_value ?? '']));
    fillTable('runtime-table', rows, 'no runtime values');
  }

  function histogramSummary(h: HistogramsJson, q: QuantilesJson): string {
    return QUANTILES.map((p) => {
      const v = q.values[h.supported_quantiles.indexOf(p)];
      return `p${p} ${v?.cumulative === null || v === undefined ? '–' : formatNumber(v.cumulative)}`;
    }).join(' · ');
  }

  function renderStats(): void {
    const needle = statsSearch.value.trim().toLowerCase();
    const nonZero = statsNonZero.checked;
    const matching: HTMLTableRowElement[] = [];
    let count = 0;
    const take = (name: string, value: string) => {
      if (needle !== '' && !name.toLowerCase().includes(needle)) return;
      count++;
      if (matching.length < STATS_ROWS) matching.push(row([name, value], 1));
    };
    for (const s of latestStats) {
      if (s.histograms !== undefined) {
        for (const q of s.histograms.computed_quantiles) {
          if (!nonZero || q.values.some((v) => v.cumulative !== null)) take(q.name, histogramSummary(s.histograms, q));
        }
      } else if (!nonZero || (s.value ?? 0) !== 0) {
        take(s.name, String(s.value ?? 0));
      }
    }
    fillTable('stats-table', matching, 'no stats match');
    byId<HTMLElement>('stats-count').textContent = count > matching.length ? `showing ${matching.length} of ${count}: narrow the search` : `${count} stats`;
  }

  /** The latency quantiles of every `*_rq_time` histogram in the last stats interval. */
  function latencies(stats: StatsJson): Map<string, (number | null)[]> {
    const out = new Map<string, (number | null)[]>();
    for (const s of stats.stats) {
      const h = s.histograms;
      if (h === undefined) continue;
      for (const q of h.computed_quantiles) {
        if (q.name.endsWith('_rq_time')) out.set(q.name, QUANTILES.map((p) => q.values[h.supported_quantiles.indexOf(p)]?.interval ?? null));
      }
    }
    return out;
  }

  function renderLatencyChoices(names: readonly string[]): void {
    const current = latencySelect.value;
    const known = Array.from(latencySelect.options, (o) => o.value);
    if (known.join('\n') !== names.join('\n')) {
      latencySelect.replaceChildren(...names.map((n) => new Option(n, n)));
      // A cluster's latency is the upstream's; the first cluster's is the default.
      latencySelect.value = names.includes(current) ? current : (names.find((n) => /^cluster\.[^.]+\.upstream_rq_time$/.test(n)) ?? names[0] ?? '');
    }
  }

  /** Lines of `series` (null: a gap) over the last HISTORY_MS, 0 at the bottom. */
  function drawChart(id: string, series: readonly (readonly (number | null)[])[], labels: readonly string[]): void {
    const chart = byId<SVGSVGElement>(id);
    const width = Number(chart.getAttribute('width'));
    const height = Number(chart.getAttribute('height'));
    const left = 44;
    const bottom = height - 16;
    const top = 8;
    const right = width - 6;
    const values = series.flat().filter((v): v is number => v !== null);
    const max = Math.max(1, ...values);
    const now = history.length > 0 ? history[history.length - 1]!.at : 0;
    const x = (at: number) => right - ((now - at) / HISTORY_MS) * (right - left);
    const y = (v: number) => bottom - (v / max) * (bottom - top);
    const parts: SVGElement[] = [
      svg('line', { x1: left, y1: top, x2: left, y2: bottom, class: 'chart-axis' }),
      svg('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'chart-axis' }),
      svg('text', { x: left - 4, y: top + 8, 'text-anchor': 'end', class: 'chart-label' }, formatNumber(max)),
      svg('text', { x: left - 4, y: bottom, 'text-anchor': 'end', class: 'chart-label' }, '0'),
      svg('text', { x: left, y: height - 2, class: 'chart-label' }, `-${HISTORY_MS / 60_000} min`),
      svg('text', { x: right, y: height - 2, 'text-anchor': 'end', class: 'chart-label' }, 'now'),
    ];
    series.forEach((values, i) => {
      let run: (readonly [number, number])[] = [];
      const endRun = () => {
        if (run.length > 1) parts.push(svg('polyline', { points: run.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' '), class: `chart-line series-${i}` }));
        else if (run.length === 1) parts.push(svg('circle', { cx: run[0]![0], cy: run[0]![1], r: 1.5, class: `series-${i}` }));
        run = [];
      };
      values.forEach((v, j) => {
        if (v === null) endRun();
        else run.push([x(history[j]!.at), y(v)]);
      });
      endRun();
      if (labels[i] !== undefined) parts.push(svg('text', { x: left + 8 + i * 40, y: top + 8, class: `chart-label series-${i}` }, labels[i]!));
    });
    chart.replaceChildren(...parts);
  }

  function renderCharts(): void {
    drawChart('chart-rq', [history.map((s) => s.rqPerSecond)], []);
    drawChart('chart-5xx', [history.map((s) => s.errorsPerSecond)], []);
    const chosen = latencySelect.value;
    drawChart(
      'chart-latency',
      QUANTILES.map((_, i) => history.map((s) => s.latency.get(chosen)?.[i] ?? null)),
      QUANTILES.map((p) => `p${p}`),
    );
  }

  async function refresh(): Promise<void> {
    polling = true;
    try {
      const [info, stats, clusters, listeners, runtime] = await Promise.all([
        get('server_info'),
        getJson<StatsJson>('stats?format=json'),
        getJson<ClustersJson>('clusters?format=json'),
        getJson<ListenersJson>('listeners?format=json'),
        getJson<RuntimeJson>('runtime'),
      ]);
      const at = Date.now();
      const counters = new Map<string, number>();
      for (const s of stats.stats) if (s.histograms === undefined) counters.set(s.name, s.value ?? 0);
      const requests = downstreamSum(counters, 'downstream_rq_total');
      const errors5xx = downstreamSum(counters, 'downstream_rq_5xx');
      const latency = latencies(stats);
      const seconds = previous === null ? null : Math.max(0.001, (at - previous.at) / 1000);
      const rates = previous === null || seconds === null ? null : { requests: rate(requests, previous.requests, seconds), errors: rate(errors5xx, previous.errors5xx, seconds) };
      history.push({ at, rqPerSecond: rates?.requests ?? null, errorsPerSecond: rates?.errors ?? null, latency });
      while (history.length > 0 && history[0]!.at < at - HISTORY_MS) history.shift();
      renderServer(info, counters);
      const hosts = renderClusters(clusters, seconds);
      renderListeners(listeners);
      renderRuntime(runtime);
      latestStats = stats.stats;
      renderStats();
      renderLatencyChoices([...latency.keys()].sort());
      renderCharts();
      previous = { at, requests, errors5xx, hosts };
      status.textContent = `refreshed ${new Date(at).toLocaleTimeString()}, every ${refreshMs / 1000} s`;
      status.classList.remove('dash-error');
    } catch (e) {
      status.textContent = `refresh failed: ${(e as Error).message}`;
      status.classList.add('dash-error');
    } finally {
      polling = false;
      timer = document.visibilityState === 'visible' ? window.setTimeout(() => void refresh(), refreshMs) : undefined;
    }
  }

  // A hidden tab stops polling after its current poll, and starts again when shown.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && timer === undefined && !polling) void refresh();
  });
  document.querySelectorAll<HTMLFormElement>('form[data-confirm]').forEach((form) => {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.dataset.confirm ?? '')) event.preventDefault();
    });
  });
  statsSearch.addEventListener('input', renderStats);
  statsNonZero.addEventListener('change', renderStats);
  latencySelect.addEventListener('change', renderCharts);
  void refresh();
}

/** /dashboard.js: the function above, called once the page has loaded (the script is deferred). */
export function dashboardScript(): string {
  return `'use strict';\n(${dashboardMain.toString()})();\n`;
}
