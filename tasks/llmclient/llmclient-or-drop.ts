/**
 * The LLMClient a task was sent for. Smarter's llmclient tasks drop a message whose LLMClient no longer exists,
 * logging `<task>() LLMClient <id> not found (llmclient_llmclient).` and, in some of them, what they do about it.
 */
import type { Logger } from '../../lib/logger.js';
import type { Queryable } from '../db/database.js';
import { type LlmclientRow, findLlmclient } from './rows.js';

/** How the task says it: the level, the words after the sentence above, and fields logged with it. */
export interface NotFoundLog {
  level: 'warn' | 'error';
  then: string;
  meta?: Record<string, unknown>;
}

const NOTHING_TO_DO: NotFoundLog = { level: 'error', then: ' Nothing to do, returning.' };

/** The LLMClient, or null once its absence is logged: the task then returns None. */
export async function llmclientOrDrop(
  db: Queryable,
  logger: Logger,
  task: string,
  id: number,
  notFound: NotFoundLog = NOTHING_TO_DO,
): Promise<LlmclientRow | null> {
  const l = await findLlmclient(db, id);
  if (l) return l;
  const message = `${task}() LLMClient ${id} not found (llmclient_llmclient).${notFound.then}`;
  if (notFound.meta) logger[notFound.level](message, notFound.meta);
  else logger[notFound.level](message);
  return null;
}
