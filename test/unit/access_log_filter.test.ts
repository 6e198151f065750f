import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import { RequestHead, ResponseHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { StreamInfo } from '../../src/stream_info/stream_info';
import { ManualClock } from '../helpers/manual_clock';
import { ResponseFlag } from '../../src/stream_info/response_flags';
import { createFilter, requestIdModulo } from '../../src/access_log/access_log_filter';
import { accessLogFilterModel } from '../../src/access_log/access_log_model';
import { atField } from '../../src/config/errors';
import type { AccessLogFilterConfig } from '../../src/access_log/access_log_config';
import type { FormatContext } from '../../src/access_log/format_context';
import type { JsonObject } from '../../src/config/json';


function info(): StreamInfo {
  const i = new StreamInfo({ id: 1, localAddress: '127.0.0.1:1', directRemoteAddress: '127.0.0.1:2', requestedServerName: null, ssl: null }, new ManualClock());
  i.start();
  return i;
}

function request(headers: string[] = []): RequestHead {
  const r = new RequestHead('GET', '/path', false);
  r.authority = 'host';
  r.headers.push(...headers);
  return r;
}

function ctx(i: StreamInfo, req: RequestHead | null = request(), res: ResponseHead | null = null, trailers: string[] | null = null): FormatContext {
  return { info: i, request: req, response: res, trailers };
}

/** The filter of an access log configured with `filter`, through the model as the config builds it. */
function filterOf(filter: JsonObject): AccessLogFilterConfig {
  return atField('filter', () => accessLogFilterModel(filter));
}

function build(filter: JsonObject, runtime: [string, string][] = [], random = () => 0) {
  return createFilter(filterOf(filter), { runtime: new LiveRuntime(runtime), random });
}

test('status_code_filter: EQ, GE, LE against the default or the runtime value; no response is 0', () => {
  const i = info();
  i.responseCode = 503;
  const ge = build({ status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'log.min_status' } } } });
  assert.equal(ge.evaluate(ctx(i)), true);
  const geRaised = build({ status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'log.min_status' } } } }, [['log.min_status', '504']]);
  assert.equal(geRaised.evaluate(ctx(i)), false);
  const eq = build({ status_code_filter: { comparison: { value: { default_value: 0, runtime_key: 'k' } } } });
  assert.equal(eq.evaluate(ctx(i)), false);
  assert.equal(eq.evaluate(ctx(info())), true);
  const le = build({ status_code_filter: { comparison: { op: 'LE', value: { default_value: 299, runtime_key: 'k' } } } });
  assert.equal(le.evaluate(ctx(i)), false);
  assert.equal(le.evaluate(ctx(info())), true);
});

test('duration_filter: whole milliseconds of the complete stream', () => {
  const filter = build({ duration_filter: { comparison: { op: 'GE', value: { default_value: 100, runtime_key: 'k' } } } });
  const i = info();
  assert.equal(filter.evaluate(ctx(i)), false);
  i.requestComplete = 99.9;
  assert.equal(filter.evaluate(ctx(i)), false);
  i.requestComplete = 100.2;
  assert.equal(filter.evaluate(ctx(i)), true);
});

test('not_health_check_filter and traceable_filter', () => {
  const notHc = build({ not_health_check_filter: {} });
  const i = info();
  assert.equal(notHc.evaluate(ctx(i)), true);
  i.healthCheck = true;
  assert.equal(notHc.evaluate(ctx(i)), false);
  const traceable = build({ traceable_filter: {} });
  const forced = request(['x-request-id', 'cc21d9b0-cf5c-932b-8c7e-98aeb7988cd2']);
  const sampled = request(['x-request-id', 'cc21d9b0-cf5c-a32b-8c7e-98aeb7988cd2']);
  assert.equal(traceable.evaluate(ctx(info(), forced)), true);
  assert.equal(traceable.evaluate(ctx(info(), sampled)), false);
  assert.equal(traceable.evaluate(ctx(info(), request())), false);
  assert.equal(traceable.evaluate(ctx(info(), null)), false);
  assert.equal(traceable.evaluate(ctx(i, forced)), false);
});

test('runtime_filter: the x-request-id decides unless use_independent_randomness; the runtime key overrides', () => {
  // 0x00000031 = 49: in for 50%, out for 49%.
  const id = request(['x-request-id', '00000031-cf5c-432b-8c7e-98aeb7988cd2']);
  const fifty = build({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 50 } } }, [], () => 99);
  assert.equal(fifty.evaluate(ctx(info(), id)), true);
  const fortyNine = build({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 50 } } }, [['log.sample', '49']], () => 0);
  assert.equal(fortyNine.evaluate(ctx(info(), id)), false);
  const independent = build({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 50 }, use_independent_randomness: true } }, [], () => 99);
  assert.equal(independent.evaluate(ctx(info(), id)), false);
  // Without a usable request id the random source decides.
  assert.equal(fifty.evaluate(ctx(info(), request(['x-request-id', 'not-hex!']))), false);
  assert.equal(fifty.evaluate(ctx(info(), null)), false);
  const million = build({ runtime_filter: { runtime_key: 'k', percent_sampled: { numerator: 500000, denominator: 'MILLION' } } }, [], () => 0);
  assert.equal(million.evaluate(ctx(info(), request(['x-request-id', '0007a11f-0000-0000-0000-000000000000']))), true);
  assert.equal(requestIdModulo('0007a120-rest', 1_000_000), 500_000);
  assert.equal(requestIdModulo('abc', 100), null);
});

test('and_filter / or_filter combine; header_filter matches the request (none for TCP)', () => {
  const i = info();
  i.responseCode = 500;
  const header = { header_filter: { header: { name: 'x-debug', exact_match: '1' } } };
  const status = { status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'k' } } } };
  const and = build({ and_filter: { filters: [header, status] } });
  const or = build({ or_filter: { filters: [header, status] } });
  const debug = request(['x-debug', '1']);
  assert.equal(and.evaluate(ctx(i, debug)), true);
  assert.equal(and.evaluate(ctx(i, request())), false);
  assert.equal(or.evaluate(ctx(info(), debug)), true);
  assert.equal(or.evaluate(ctx(info(), request())), false);
  assert.equal(build(header).evaluate(ctx(info(), null)), false);
  assert.equal(build({ header_filter: { header: { name: 'x-debug', present_match: true, invert_match: true } } }).evaluate(ctx(info(), null)), true);
  assert.equal(build({ header_filter: { header: { name: ':method', exact_match: 'GET' } } }).evaluate(ctx(info())), true);
});

test('response_flag_filter: the listed flags, or any flag when none is listed', () => {
  const i = info();
  const any = build({ response_flag_filter: {} });
  const listed = build({ response_flag_filter: { flags: ['UF', 'UO'] } });
  assert.equal(any.evaluate(ctx(i)), false);
  i.setResponseFlag(ResponseFlag.NoHealthyUpstream);
  assert.equal(any.evaluate(ctx(i)), true);
  assert.equal(listed.evaluate(ctx(i)), false);
  i.setResponseFlag(ResponseFlag.UpstreamOverflow);
  assert.equal(listed.evaluate(ctx(i)), true);
});

test('grpc_status_filter: trailers, then headers, then the HTTP status; exclude inverts', () => {
  const filter = build({ grpc_status_filter: { statuses: ['UNAVAILABLE', 'INTERNAL'] } });
  const excluding = build({ grpc_status_filter: { statuses: ['OK'], exclude: true } });
  const response = new ResponseHead(200, false);
  response.headers.push('grpc-status', '13');
  assert.equal(filter.evaluate(ctx(info(), request(), response)), true);
  assert.equal(filter.evaluate(ctx(info(), request(), response, ['grpc-status', '0'])), false);
  assert.equal(excluding.evaluate(ctx(info(), request(), response, ['grpc-status', '0'])), false);
  const i = info();
  i.responseCode = 503;
  assert.equal(filter.evaluate(ctx(i, request(), new ResponseHead(503, false))), true);
  // Nothing known is UNKNOWN; a status that is not a code is none of the listed ones.
  assert.equal(build({ grpc_status_filter: { statuses: ['UNKNOWN'] } }).evaluate(ctx(info())), true);
  assert.equal(filter.evaluate(ctx(info(), request(), null, ['grpc-status', 'abc'])), false);
  assert.equal(build({ grpc_status_filter: { statuses: [14] } }).evaluate(ctx(i)), true);
});

test('filters this build cannot evaluate, and bad values, are refused by field path', () => {
  const refused: [JsonObject, string, RegExp][] = [
    [{ extension_filter: { name: 'x' } }, 'filter.extension_filter', /not implemented/],
    [{ metadata_filter: {} }, 'filter.metadata_filter', /not implemented/],
    [{ response_flag_filter: { flags: ['UF', 'NOPE'] } }, 'filter.response_flag_filter.flags[1]', /not a response flag/],
    [{ grpc_status_filter: { statuses: ['NOPE'] } }, 'filter.grpc_status_filter.statuses[0]', /not a gRPC status/],
    [{ and_filter: { filters: [{ traceable_filter: {} }, { metadata_filter: {} }] } }, 'filter.and_filter.filters[1].metadata_filter', /not implemented/],
    [{ or_filter: { filters: [{ traceable_filter: {} }] } }, 'filter.or_filter.filters', /at least 2/],
    [{ status_code_filter: {} }, 'filter.status_code_filter.comparison', /required/],
    [{ runtime_filter: {} }, 'filter.runtime_filter.runtime_key', /required/],
    [{ header_filter: { header: { name: 'x', safe_regex_match: { google_re2: {}, regex: '(' } } } }, 'filter.header_filter.header.safe_regex_match', /./],
  ];
  for (const [filter, path, reason] of refused) {
    assert.throws(
      () => filterOf(filter),
      (e: unknown) => e instanceof FieldError && e.fieldPath.startsWith(path) && reason.test(e.reason),
      JSON.stringify(filter),
    );
  }
});
