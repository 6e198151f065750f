// Accept-Encoding negotiation as Envoy 1.16's compressor filter decides it: q-values, identity,
// `*` and q=0, and the compressors of a chain limited to media types.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AcceptEncodingStat, chooseEncoding, type CompressorOffer, mediaTypeOf } from '../../src/filters/http/accept_encoding';

const gzip: CompressorOffer = { encoding: 'gzip', contentTypes: new Set(['text/html', 'application/json']) };
const deflate: CompressorOffer = { encoding: 'deflate', contentTypes: new Set() };
const choose = (accept: string, offers: readonly CompressorOffer[] = [gzip], mediaType = 'text/html') => chooseEncoding(accept, mediaType, offers);

test('the accepted encoding of the highest q-value that a compressor offers', () => {
  assert.deepEqual(choose('gzip'), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
  assert.deepEqual(choose('br, gzip;q=0.5'), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
  assert.deepEqual(choose('deflate;q=0.5, gzip;q=0.8', [gzip, deflate]), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
  assert.deepEqual(choose('deflate;q=0.9, gzip;q=0.8', [gzip, deflate]), { encoding: 'deflate', stat: AcceptEncodingStat.ValidCompressor });
  // The first of equal q-values wins; spaces and a `Q` in any case are fine.
  assert.deepEqual(choose(' deflate ; Q = 1 ,gzip', [gzip, deflate]), { encoding: 'deflate', stat: AcceptEncodingStat.ValidCompressor });
  // A q-value that is no number drops its element; another parameter leaves q at 1.
  assert.deepEqual(choose('gzip;q=high, identity;q=0.1'), { encoding: 'identity', stat: AcceptEncodingStat.Identity });
  assert.deepEqual(choose('gzip;level=1'), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
});

test('identity and the wildcard', () => {
  assert.deepEqual(choose('identity'), { encoding: 'identity', stat: AcceptEncodingStat.Identity });
  assert.deepEqual(choose('identity, gzip;q=0.5'), { encoding: 'identity', stat: AcceptEncodingStat.Identity });
  assert.deepEqual(choose('*'), { encoding: 'gzip', stat: AcceptEncodingStat.Wildcard });
  // The wildcard picks the compressor of the chain registered first.
  assert.deepEqual(choose('*', [deflate, gzip]), { encoding: 'deflate', stat: AcceptEncodingStat.Wildcard });
  // gzip;q=0 is refused even through `*`; `*;q=0` leaves gzip wanted.
  assert.deepEqual(choose('gzip;q=0, *'), { encoding: 'identity', stat: AcceptEncodingStat.NotValid });
  assert.deepEqual(choose('*;q=0, gzip'), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
  assert.deepEqual(choose('gzip;q=0, deflate, *', [gzip, deflate]), { encoding: 'deflate', stat: AcceptEncodingStat.ValidCompressor });
});

test('nothing usable is not valid', () => {
  for (const accept of ['', ',', 'br', 'gzip;q=0', 'identity;q=0', 'GZIP']) {
    assert.deepEqual(choose(accept), { encoding: 'identity', stat: AcceptEncodingStat.NotValid }, accept);
  }
  // A media type no compressor offers leaves nothing to choose from.
  assert.deepEqual(choose('gzip', [gzip], 'image/png'), { encoding: 'identity', stat: AcceptEncodingStat.NotValid });
  // Without a media type, every compressor counts.
  assert.deepEqual(choose('gzip', [gzip], ''), { encoding: 'gzip', stat: AcceptEncodingStat.ValidCompressor });
});

test('a Content-Type is compared by its media type, lower case, parameters dropped', () => {
  assert.equal(mediaTypeOf(' Text/HTML ; charset=utf-8'), 'text/html');
  assert.equal(mediaTypeOf('application/json'), 'application/json');
  assert.equal(mediaTypeOf(''), '');
});
