// A subscription whose resources are a DiscoveryResponse in a file (ConfigSource.path), as
// Envoy's filesystem subscription: read at start, then again each time a file is moved into its
// place (an atomic rename), never on a write in place, which could be read half done.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { watchDirectory } from '../../common/directory_watch';
import { SerialQueue } from '../../common/serial_queue';
import type { Logger } from '../../log/logger_api';
import { asConfigFileError, UnknownFieldError } from '../errors';
import { readProtoFile } from '../proto_file';
import type { ProtoSchema } from '../schema';
import { type DecodedResponse, type ResourceDecoder, UnusableResourceError } from './resource_decoder';
import type { ResourceType } from './resource_types';
import type { Subscription, SubscriptionCallbacks, SubscriptionStats } from './subscription';
import { versionHash } from './version_hash';

const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

export interface PathSubscriptionDeps {
  readonly schema: ProtoSchema;
  readonly decoder: ResourceDecoder;
  readonly log: Logger;
}

export class PathSubscription implements Subscription {
  private readonly log: Logger;
  private watcher: fs.FSWatcher | null = null;
  private closed = false;
  /** A rename while the subscriber applies the last file is read once that is done. */
  private readonly refreshes = new SerialQueue();

  constructor(
    private readonly file: string,
    private readonly type: ResourceType,
    private readonly callbacks: SubscriptionCallbacks,
    private readonly stats: SubscriptionStats,
    private readonly deps: PathSubscriptionDeps,
  ) {
    this.log = deps.log.forFile(__filename);
  }

  /** A file holds every resource of its type: the names asked for do not filter it, as in Envoy. */
  start(_resourceNames: readonly string[]): void {
    const absolute = path.resolve(this.file);
    const name = path.basename(absolute);
    this.watcher = watchDirectory(path.dirname(absolute), `updates of ${this.file}`, this.log, (entry, event) => {
      // A rename event also reports the file going away; only a file that is there is read.
      if (entry === name && event === 'rename' && fs.existsSync(absolute)) this.refresh();
    });
    this.refresh();
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = null;
  }

  private refresh(): void {
    this.refreshes.run(() => this.readAndDeliver());
  }

  private async readAndDeliver(): Promise<void> {
    if (this.closed) return;
    const stats = this.stats;
    stats.update_attempt.inc();
    let response: DecodedResponse;
    try {
      response = await this.read();
    } catch (error) {
      if (this.closed) return;
      const reason = asConfigFileError(this.file, error) as Error;
      if (error instanceof UnknownFieldError || error instanceof UnusableResourceError) {
        this.rejected(reason, reason.message);
        return;
      }
      // Unreadable or unparsable: Envoy counts a failure and treats it as a rejection, the
      // likelier cause being a bad configuration.
      this.log.warn(`filesystem config update failure: ${reason.message}`);
      stats.update_failure.inc();
      this.callbacks.onConfigUpdateFailed('update_rejected', reason);
      return;
    }
    if (this.closed) return;
    try {
      await this.callbacks.onConfigUpdate(response.resources, response.versionInfo);
    } catch (error) {
      if (this.closed) return;
      this.rejected(error as Error, `${this.file}: ${(error as Error).message}`);
      return;
    }
    if (this.closed) return;
    stats.update_time.set(Date.now());
    stats.version.set(versionHash(response.versionInfo));
    stats.update_success.inc();
  }

  /** Read, and refused: by the schema (an unknown field), the decoder or the subscriber. */
  private rejected(error: Error, logged: string): void {
    this.log.warn(`filesystem config update rejected: ${logged}`);
    this.stats.update_rejected.inc();
    this.callbacks.onConfigUpdateFailed('update_rejected', error);
  }

  /** The resources are decoded in slices (the promise rejects at the first invalid field). */
  private async read(): Promise<DecodedResponse> {
    const { schema, decoder } = this.deps;
    const file = readProtoFile(this.file, schema.root.lookupType(DISCOVERY_RESPONSE), schema, { allowUnknownFields: decoder.unknownFieldsAllowed() });
    decoder.report(file.unknownFields);
    return decoder.decode(file.json, this.type);
  }
}
