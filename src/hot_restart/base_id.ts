// Which base id this proxy runs under: --base-id as given, or with --use-dynamic-base-id the
// first random id whose epoch-0 domain sockets nobody holds. The id names the shared memory
// region too, so it is settled (and its sockets held) before anything else is opened.

import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import { CREATED_FILE_MODE } from '../common/file_mode';
import { BaseIdPathError, DynamicBaseIdError, HotRestartSocketInUseError } from './errors';

export const DYNAMIC_BASE_ID_ATTEMPTS = 100;
/** Envoy's mask: the scaling by 10 of the socket ids must still fit in 32 bits. */
const DYNAMIC_BASE_ID_MASK = 0x0fffffff;

export interface BaseIdOptions {
  readonly baseId: number;
  readonly useDynamicBaseId: boolean;
}

/** A uniform 32-bit unsigned integer. */
export function randomUint32(): number {
  return randomInt(0x1_0000_0000);
}

/**
 * Runs `bind` (which binds this epoch's domain sockets and throws HotRestartSocketInUseError when
 * they are taken) for the base id to use, and returns that id with what `bind` returned. The
 * sockets stay bound, so no other process can take a dynamic id between its choice and its use.
 */
export function claimBaseId<T>(
  options: BaseIdOptions,
  bind: (baseId: number) => T,
  random: () => number = randomUint32,
): { baseId: number; bound: T } {
  if (!options.useDynamicBaseId) return { baseId: options.baseId, bound: bind(options.baseId) };
  for (let attempt = 0; attempt < DYNAMIC_BASE_ID_ATTEMPTS; attempt++) {
    const baseId = random() & DYNAMIC_BASE_ID_MASK;
    try {
      return { baseId, bound: bind(baseId) };
    } catch (error) {
      if (!(error instanceof HotRestartSocketInUseError)) throw error;
    }
  }
  throw new DynamicBaseIdError();
}

/** --base-id-path: the unscaled id, no newline, as Envoy writes it. */
export function writeBaseIdFile(path: string, baseId: number): void {
  try {
    fs.writeFileSync(path, String(baseId), { mode: CREATED_FILE_MODE });
  } catch (error) {
    throw new BaseIdPathError(path, error);
  }
}
