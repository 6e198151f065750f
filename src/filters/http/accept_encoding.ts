// Which content encoding a response gets, from its request's Accept-Encoding and the compressors
// of the filter chain (Envoy 1.16's CompressorFilter::chooseEncoding): the accepted encoding of
// the highest q-value that a compressor offers for the response's media type, `identity`, or,
// for `*`, the compressor registered first. An encoding given q=0 is refused even through `*`.
// Pure.

/** Which kind of answer the header gave, as the compressor counts it (header_*). */
export const enum AcceptEncodingStat {
  NotValid,
  Identity,
  Wildcard,
  ValidCompressor,
}

export interface EncodingChoice {
  /** The content encoding chosen: a compressor's, or `identity` (no compression). */
  readonly encoding: string;
  readonly stat: AcceptEncodingStat;
}

/** A compressor of the chain, in its order: its content encoding and the media types it compresses (lower case; empty: any). */
export interface CompressorOffer {
  readonly encoding: string;
  readonly contentTypes: ReadonlySet<string>;
}

const IDENTITY = 'identity';
const WILDCARD = '*';
const NOT_VALID: EncodingChoice = { encoding: IDENTITY, stat: AcceptEncodingStat.NotValid };
const IDENTITY_CHOICE: EncodingChoice = { encoding: IDENTITY, stat: AcceptEncodingStat.Identity };
/** absl::SimpleAtof's forms: decimal or exponent notation, inf, infinity, nan. */
const FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$/i;

/** A Content-Type's media type as the compressor compares it: before any parameter, trimmed, lower case. */
export function mediaTypeOf(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * @param acceptEncoding the request's Accept-Encoding
 * @param mediaType the response's media type (mediaTypeOf), '' without a Content-Type
 * @param offers the chain's compressors, in order
 */
export function chooseEncoding(acceptEncoding: string, mediaType: string, offers: readonly CompressorOffer[]): EncodingChoice {
  // Encodings a compressor offers for this media type, each with its first registration.
  const allowed = new Map<string, number>();
  for (const offer of offers) {
    if (mediaType !== '' && offer.contentTypes.size > 0 && !offer.contentTypes.has(mediaType)) continue;
    if (!allowed.has(offer.encoding)) allowed.set(offer.encoding, allowed.size);
  }
  const accepted: { readonly coding: string; readonly q: number }[] = [];
  for (const token of acceptEncoding.split(',')) {
    if (token === '') continue;
    const semicolon = token.indexOf(';');
    const coding = (semicolon === -1 ? token : token.slice(0, semicolon)).trim();
    let q = 1;
    if (semicolon !== -1) {
      const params = token.slice(semicolon + 1);
      const equals = params.indexOf('=');
      if (equals !== -1 && params.slice(0, equals).trim().toLowerCase() === 'q') {
        const value = params.slice(equals + 1).trim();
        // A q-value that is no number drops the whole element.
        if (!FLOAT.test(value)) continue;
        q = /inf/i.test(value) ? (value.startsWith('-') ? -Infinity : Infinity) : Number(value);
      }
    }
    accepted.push({ coding, q });
    // Kept among the client's wishes (so that `*` cannot bring it back), but never offered.
    if (q === 0) allowed.delete(coding);
  }
  if (accepted.length === 0 || allowed.size === 0) return NOT_VALID;
  let choice = IDENTITY;
  let best = 0;
  for (const { coding, q } of accepted) {
    if (q > best && (allowed.has(coding) || coding === IDENTITY || coding === WILDCARD)) {
      choice = coding;
      best = q;
    }
  }
  if (best === 0) return NOT_VALID;
  if (choice === IDENTITY) return IDENTITY_CHOICE;
  if (choice === WILDCARD) return { encoding: allowed.keys().next().value!, stat: AcceptEncodingStat.Wildcard };
  return { encoding: choice, stat: AcceptEncodingStat.ValidCompressor };
}
