// Another revision of the project, built beside this checkout for an A/B comparison: a detached
// git worktree in a temporary directory, with this checkout's node_modules linked in, built the
// way the Makefile builds (addon, tsc, generated protos, build info, bundles, compile cache) but
// step by step, so that nothing can run `npm ci` through the link and wipe the shared node_modules.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeExit, outputTail, type ProcessGroups } from './process_group';

export interface Worktree {
  readonly path: string;
  readonly commit: string;
  /** Removes the directory and git's record of it; safe to call twice, and from an exit handler. */
  remove(): void;
}

export class RevisionBuildError extends Error {
  override readonly name = 'RevisionBuildError';
}

const ADDON = join('native', 'proxy-native.node');
const BUNDLE_SCRIPT = join('scripts', 'build-bundle.js');
const COMPILE_CACHE_SCRIPT = join('scripts', 'build-compile-cache.js');

// Enough for tsc's error list or a compiler's last words.
const OUTPUT_LINES_SHOWN = 40;

function git(repoRoot: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The full hash of the commit `revision` names in the repository, or null when it names none. */
export function resolveCommit(repoRoot: string, revision: string): string | null {
  const result = spawnSync('git', ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], { cwd: repoRoot, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** `8d5cf73 TagExtractor: one nameSlot() ...`: the commit as `git log --oneline` shows it. */
export function describeCommit(repoRoot: string, commit: string): string {
  return git(repoRoot, ['log', '-1', '--format=%h %s', commit]);
}

/** Checks `commit` out, detached, in a new temporary directory. */
export function addWorktree(repoRoot: string, commit: string): Worktree {
  const path = mkdtempSync(join(tmpdir(), 'proxy-compare-'));
  let removed = false;
  const worktree: Worktree = {
    path,
    commit,
    remove: () => {
      if (removed) return;
      removed = true;
      removeWorktree(repoRoot, path);
    },
  };
  try {
    git(repoRoot, ['worktree', 'add', '--detach', path, commit]);
  } catch (error) {
    worktree.remove();
    throw new RevisionBuildError(`git worktree add ${commit} failed: ${(error as { stderr?: string }).stderr ?? (error as Error).message}`);
  }
  return worktree;
}

function removeWorktree(repoRoot: string, path: string): void {
  // The link first: whatever removes the tree below must never reach the shared node_modules.
  try {
    unlinkSync(join(path, 'node_modules'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const removed = spawnSync('git', ['worktree', 'remove', '--force', path], { cwd: repoRoot, stdio: 'ignore' });
  if (removed.status !== 0) {
    // A worktree git never registered, or half made by an interrupted `add`: the directory goes,
    // and git forgets the worktrees whose directory is gone.
    rmSync(path, { recursive: true, force: true });
    spawnSync('git', ['worktree', 'prune'], { cwd: repoRoot, stdio: 'ignore' });
  }
}

/**
 * Builds the worktree's bin/proxy with its own sources and build scripts. The addon is copied
 * from this checkout when the worktree's native/ sources equal this checkout's (a Rust build
 * is the slowest step), else built. `report` hears each step as it starts.
 */
export async function buildWorktree(processes: ProcessGroups, repoRoot: string, worktree: Worktree, report: (step: string) => void): Promise<void> {
  const step = async (label: string, command: string, args: readonly string[]): Promise<void> => {
    report(label);
    const child = processes.spawn(label, command, args, worktree.path);
    const status = await child.exited;
    if (status.code !== 0) throw new RevisionBuildError(`${label} in ${worktree.path} ${describeExit(status)}${outputTail(child, OUTPUT_LINES_SHOWN)}`);
  };
  symlinkSync(realpathSync(join(repoRoot, 'node_modules')), join(worktree.path, 'node_modules'));
  // Against the working tree, not HEAD: this checkout's addon is built from what is on disk.
  if (spawnSync('git', ['diff', '--quiet', worktree.commit, '--', 'native/'], { cwd: repoRoot }).status === 0) {
    if (!existsSync(join(repoRoot, ADDON))) throw new RevisionBuildError(`${join(repoRoot, ADDON)} is missing: build this checkout first (make build)`);
    report(`native addon: copied (native/ is the same as in ${repoRoot})`);
    copyFileSync(join(repoRoot, ADDON), join(worktree.path, ADDON));
  } else {
    await step('native addon: scripts/build-native.sh', 'bash', ['scripts/build-native.sh']);
  }
  await step('tsc', process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.']);
  await step('scripts/gen-protos.js', process.execPath, ['scripts/gen-protos.js']);
  await step('scripts/gen-build-info.js', process.execPath, ['scripts/gen-build-info.js']);
  // A revision whose processes run bundles (bin/proxy loads dist/bundle/) needs them made.
  if (existsSync(join(worktree.path, BUNDLE_SCRIPT))) await step(BUNDLE_SCRIPT, process.execPath, [BUNDLE_SCRIPT]);
  // A revision that starts from a compile cache gets one, as `make` makes it, so that both builds start alike.
  if (existsSync(join(worktree.path, COMPILE_CACHE_SCRIPT))) await step(COMPILE_CACHE_SCRIPT, process.execPath, [COMPILE_CACHE_SCRIPT]);
}
