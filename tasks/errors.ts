/**
 * Smarter's exception classes, as Python sees them: a failed task's result names the class and module that
 * Smarter's own code raises, so `AsyncResult.get()` and Flower show what the Python worker would have shown.
 */
import { PythonException } from '../lib/errors.js';

/** The base of an exception Smarter raises with a message alone: Python knows it as `module.type`. */
export const smarterException = (pyType: string, pyModule: string) =>
  class extends PythonException {
    constructor(message: string) {
      super(pyType, pyModule, message);
    }
  };

export class SmarterValueError extends smarterException('SmarterValueError', 'smarter.common.exceptions') {}

export class SmarterPluginError extends smarterException('SmarterPluginError', 'smarter.apps.plugin.plugin.base') {}

/** Django's `Model.DoesNotExist`, e.g. `LLMClient.DoesNotExist`. */
export class DoesNotExist extends PythonException {
  constructor(model: string, message: string) {
    super('DoesNotExist', `smarter.apps.${model}`, message);
  }
}

/**
 * A database error, named as Django names it (`django.db.utils.IntegrityError`, `OperationalError`, …) so
 * a Python client sees the class Smarter's worker would have raised; `sqlCode` keeps the server's code.
 */
export class DatabaseError extends PythonException {
  constructor(
    pyType: 'IntegrityError' | 'ProgrammingError' | 'OperationalError' | 'DataError' | 'DatabaseError',
    message: string,
    readonly sqlCode: string,
  ) {
    super(pyType, 'django.db.utils', message);
  }
}

const INTEGRITY = new Set([
  'ER_DUP_ENTRY',
  'ER_NO_REFERENCED_ROW_2',
  'ER_ROW_IS_REFERENCED_2',
  'ER_BAD_NULL_ERROR',
  'ER_CONSTRAINT_FAILED',
]);
const PROGRAMMING = new Set(['ER_NO_SUCH_TABLE', 'ER_BAD_FIELD_ERROR', 'ER_PARSE_ERROR', 'ER_BAD_DB_ERROR']);
const DATA = new Set([
  'ER_DATA_TOO_LONG',
  'ER_TRUNCATED_WRONG_VALUE',
  'ER_WARN_DATA_OUT_OF_RANGE',
  'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
]);

/** Classifies what mysql2 threw; anything without a server or socket code is passed through unchanged. */
export function toDatabaseError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return err;
  const type = INTEGRITY.has(code)
    ? 'IntegrityError'
    : PROGRAMMING.has(code)
      ? 'ProgrammingError'
      : DATA.has(code)
        ? 'DataError'
        : 'OperationalError';
  return new DatabaseError(type, `(${code}) ${err.message}`, code);
}

/** `register_custom_domain`: the domain is registered to another account. */
export class LLMClientCustomDomainExists extends smarterException(
  'LLMClientCustomDomainExists',
  'smarter.apps.llmclient.tasks.exceptions',
) {}

/** `create_custom_domain_dns_record`: no custom domain with that id. */
export class LLMClientCustomDomainNotFound extends smarterException(
  'LLMClientCustomDomainNotFound',
  'smarter.apps.llmclient.tasks.exceptions',
) {}
