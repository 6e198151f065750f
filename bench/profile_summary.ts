// A V8 CPU profile (.cpuprofile, as the admin's /cpuprofiler writes it) summarized as its top
// self-time entries: each function's share of the sampled time and, given how many requests the
// profile covers, its microseconds per request. Pure: the profile in, lines out.

/** The parts of Chrome's CPU profile format the summary reads. */
export interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: CallFrame }[];
  readonly samples: readonly number[];
  /** Microseconds before each sample; the first is from the profile's start. */
  readonly timeDeltas: readonly number[];
}

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based. */
  readonly lineNumber: number;
  /** 0-based. */
  readonly columnNumber?: number;
}

/**
 * Where a place of a compiled file (its `file://` URL, 0-based line and column) was written, as
 * `file:line` (1-based); null where nothing says so. The processes run bundles, whose lines say
 * little; their source maps say which .ts line a function is.
 */
export type PlaceFinder = (url: string, line: number, column: number) => string | null;

export interface SelfTimeEntry {
  /** `function file:line`: the .ts line where a source map says, else the file relative to dist/ (or node's own `node:` module). */
  readonly where: string;
  readonly selfUs: number;
  /** Of all sampled time. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly totalUs: number;
  readonly entries: readonly SelfTimeEntry[];
}

export function summarizeCpuProfile(profile: CpuProfile, top: number, original: PlaceFinder = () => null): ProfileSummary {
  const whereById = new Map(profile.nodes.map((node) => [node.id, where(node.callFrame, original)]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  // A sample's time is the delta that follows it: the time until the next sample.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    totalUs += dt;
    const key = whereById.get(profile.samples[i]!) ?? '(unknown node)';
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  }
  const entries = [...selfUs]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => ({ where: key, selfUs: us, share: totalUs === 0 ? 0 : us / totalUs }));
  return { totalUs, entries };
}

function where(frame: CallFrame, original: PlaceFinder): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const place = original(frame.url, frame.lineNumber, frame.columnNumber ?? 0);
  if (place !== null) return `${name} ${place}`;
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/dist\//, '');
  return `${name} ${file}:${frame.lineNumber + 1}`;
}

/** The summary as a table: share, microseconds per request (when `requests` > 0), where. */
export function formatProfileSummary(summary: ProfileSummary, requests: number): string {
  const lines = [`sampled ${(summary.totalUs / 1000).toFixed(0)} ms over ${requests.toLocaleString('en-US')} requests`, '', '   self  us/req  function and place'];
  for (const entry of summary.entries) {
    const perRequest = requests > 0 ? (entry.selfUs / requests).toFixed(3) : '-';
    lines.push(`${(entry.share * 100).toFixed(2).padStart(6)}%  ${perRequest.padStart(6)}  ${entry.where}`);
  }
  return `${lines.join('\n')}\n`;
}
