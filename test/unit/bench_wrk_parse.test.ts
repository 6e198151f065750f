import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pacingScript, parseWrkOutput, parseWrkTime, WrkOutputError } from '../../bench/wrk';

// Recorded from wrk 4.1.0 against a server answering 404.
const WITH_ERROR_RESPONSES = `Running 1s test @ http://127.0.0.1:18777/nonexistent
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.87ms  493.71us   8.47ms   90.18%
    Req/Sec     2.18k   163.41     2.44k    70.00%
  Latency Distribution
     50%  806.00us
     75%    1.01ms
     90%    1.25ms
     99%    2.02ms
  2178 requests in 1.00s, 1.08MB read
  Non-2xx or 3xx responses: 2178
Requests/sec:   2172.35
Transfer/sec:      1.08MB
`;

// wrk prints the socket error line only when one of its counters is not zero.
const WITH_SOCKET_ERRORS = `Running 10s test @ http://127.0.0.1:8080/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    25.10ms   80.33ms   1.99s    97.10%
    Req/Sec    31.20k     2.01k   35.77k    72.00%
  Latency Distribution
     50%    1.52ms
     75%    1.80ms
     90%    2.61ms
     99%    1.20s
  310482 requests in 1.00m, 37.90MB read
  Socket errors: connect 3, read 17, write 0, timeout 42
Requests/sec:   5174.70
Transfer/sec:    646.83KB
`;

test('parses totals, percentiles and error responses of a recorded report', () => {
  assert.deepEqual(parseWrkOutput(WITH_ERROR_RESPONSES), {
    requests: 2178,
    durationUs: 1_000_000,
    requestsPerSecond: 2172.35,
    latency: { p50Us: 806, p75Us: 1010, p90Us: 1250, p99Us: 2020 },
    errorResponses: 2178,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
  });
});

test('parses socket errors and latencies in seconds and minutes', () => {
  const result = parseWrkOutput(WITH_SOCKET_ERRORS);
  assert.deepEqual(result.socketErrors, { connect: 3, read: 17, write: 0, timeout: 42 });
  assert.equal(result.errorResponses, 0);
  assert.equal(result.latency?.p99Us, 1_200_000);
  assert.equal(result.durationUs, 60_000_000);
  assert.equal(result.requests, 310482);
});

test('a report without --latency percentiles is an error, not zeros', () => {
  const withoutDistribution = WITH_ERROR_RESPONSES.replace(/ {2}Latency Distribution[\s\S]*?(?= {2}2178 requests)/, '');
  assert.throws(() => parseWrkOutput(withoutDistribution), WrkOutputError);
});

test('a report without totals is an error', () => {
  assert.throws(() => parseWrkOutput('unable to connect to 127.0.0.1:1 Connection refused\n'), WrkOutputError);
});

test('wrk times convert to microseconds', () => {
  assert.equal(parseWrkTime('806.00us'), 806);
  assert.equal(parseWrkTime('1.01ms'), 1010);
  assert.equal(parseWrkTime('2.00s'), 2_000_000);
  assert.equal(parseWrkTime('1.50m'), 90_000_000);
  assert.equal(parseWrkTime('1.00h'), 3_600_000_000);
  assert.throws(() => parseWrkTime('12 ms'), WrkOutputError);
  assert.throws(() => parseWrkTime('3.0ns'), WrkOutputError);
});

test("a paced run's script: wrk's delay() hook returns the wait in milliseconds", () => {
  assert.equal(pacingScript(10), 'function delay()\n  return 10\nend\n');
});
