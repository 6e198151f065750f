// The rules of the HTTP grammar (RFC 9110 section 5.6, RFC 9112) the codec checks text against,
// built from shared pieces so that every rule spells token and quoted-string the same way.

const TCHAR = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
/** DQUOTE *( qdtext / quoted-pair ) DQUOTE */
const QUOTED_STRING = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"';
const OWS = '[ \\t]*';

/** token: header names. */
export const TOKEN = new RegExp(`^${TCHAR}+$`);

/** transfer-coding = token *( OWS ";" OWS token "=" ( token / quoted-string ) ); the name captured. */
export const TRANSFER_CODING = new RegExp(`^(${TCHAR}+)(?:${OWS};${OWS}${TCHAR}+=(?:${TCHAR}+|${QUOTED_STRING}))*$`);

/**
 * What may follow a chunk size: chunk-ext = *( BWS ";" BWS token [ BWS "=" BWS ( token /
 * quoted-string ) ] ) (RFC 9112 section 7.1.1), at least one of them.
 */
export const CHUNK_EXTENSIONS = new RegExp(`^(?:${OWS};${OWS}${TCHAR}+(?:${OWS}=${OWS}(?:${TCHAR}+|${QUOTED_STRING}))?)+$`);
