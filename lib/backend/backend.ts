import type { StoredResult } from './meta.js';

export interface StoreTarget {
  /** rpc:// replies go to the message's reply_to with its correlation_id. */
  replyTo: string | null;
  correlationId: string;
}

export interface ResultBackend {
  readonly kind: 'redis' | 'rpc' | 'disabled';
  store(result: StoredResult, target: StoreTarget): Promise<void>;
  /** The stored meta of a task, where the backend can read it back (redis); null otherwise. */
  get(taskId: string): Promise<Record<string, unknown> | null>;
  close(): Promise<void>;
}

export class DisabledBackend implements ResultBackend {
  readonly kind = 'disabled';
  async store(): Promise<void> {}
  async get(): Promise<null> {
    return null;
  }
  async close(): Promise<void> {}
}
