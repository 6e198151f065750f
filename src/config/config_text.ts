// Configuration text (YAML, JSON) to a JSON value. Syntax errors become one line with the line
// and column, so that an operator can find them.

import * as yaml from 'js-yaml';
import { FieldError } from './errors';
import { MAX_NESTING_DEPTH, NESTING_TOO_DEEP } from './input_limits';
import { JsonValue } from './json';

// YAML 1.2 core schema (no timestamps or binary, so every scalar stays a JSON scalar), plus
// merge keys, which Envoy's YAML loader accepts and operators use with anchors.
const YAML_SCHEMA = yaml.CORE_SCHEMA.withTags(yaml.mergeTag);

// js-yaml counts the document and a scalar at the bottom as levels too: two more than
// MAX_NESTING_DEPTH refuses nothing that checkInputLimits accepts, and stops js-yaml's own
// recursion on anything deeper.
const YAML_MAX_DEPTH = MAX_NESTING_DEPTH + 2;
const YAML_TOO_DEEP = `nesting exceeded maxDepth (${YAML_MAX_DEPTH})`;

/** YAML, or JSON (which YAML 1.2 contains): what --config-yaml and .yaml files hold. */
export function parseYaml(text: string): JsonValue {
  try {
    return yaml.load(text, { schema: YAML_SCHEMA, maxDepth: YAML_MAX_DEPTH }) as JsonValue;
  } catch (error) {
    if (!(error instanceof yaml.YAMLException)) throw error;
    const where = error.mark === undefined ? '' : ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}`;
    // The depth limit in the words every format reports it with.
    if (error.reason === YAML_TOO_DEEP) throw new FieldError('', `YAML ${NESTING_TOO_DEEP}${where}`);
    throw new FieldError('', `YAML syntax error${where}: ${error.reason}`);
  }
}

/** Strict JSON, for .json files. */
export function parseJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new FieldError('', `JSON syntax error${jsonErrorLocation(text, error.message)}: ${jsonErrorReason(error.message)}`);
  }
}

/** V8 reports most JSON errors `... in JSON at position <offset>`. */
function jsonErrorLocation(text: string, message: string): string {
  const position = /at position (\d+)/.exec(message);
  if (position === null) return '';
  const before = text.slice(0, Number(position[1])).split('\n');
  return ` at line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** The problem without V8's location or its quote of the input (which may span lines). */
function jsonErrorReason(message: string): string {
  return message.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
}
