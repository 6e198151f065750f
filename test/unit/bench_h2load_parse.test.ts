import assert from 'node:assert/strict';
import { test } from 'node:test';
import { H2loadOutputError, parseH2loadOutput } from '../../bench/h2load';

// h2load 1.52 against a node:http2 server, `-c4 -m10 -D2`.
const REPORT = `starting benchmark...
spawning thread #0: 4 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.
Application protocol: h2c
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 2.00s, 28595.00 req/s, 1.15MB/s
requests: 57190 total, 57190 started, 57180 done, 57150 succeeded, 40 failed, 25 errored, 5 timeout
status codes: 57150 2xx, 0 3xx, 4 4xx, 6 5xx
traffic: 2.29MB (2402824) total, 160.65KB (164505) headers (space savings 95.34%), 1.02MB (1067040) data
                     min         max         mean         sd        +/- sd
time for request:      416us     14.94ms      1.37ms       784us    96.34%
`;

test('an h2load report: done requests, the rate, error statuses, and failed streams as socket errors', () => {
  assert.deepEqual(parseH2loadOutput(REPORT), {
    requests: 57180,
    durationUs: 2_000_000,
    requestsPerSecond: 28595,
    latency: null,
    errorResponses: 10,
    socketErrors: { connect: 0, read: 25, write: 0, timeout: 5 },
  });
});

test('a report without totals is an error, not zeros', () => {
  assert.throws(() => parseH2loadOutput('starting benchmark...\n'), H2loadOutputError);
});
