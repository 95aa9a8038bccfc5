/**
 * Smarter's exception classes, as Python sees them: a failed task's result names the class and module that
 * Smarter's own code raises, so `AsyncResult.get()` and Flower show what the Python worker would have shown.
 */
import { PythonException } from '../lib/errors.js';

export class SmarterValueError extends PythonException {
  constructor(message: string) {
    super('SmarterValueError', 'smarter.common.exceptions', message);
  }
}

export class SmarterPluginError extends PythonException {
  constructor(message: string) {
    super('SmarterPluginError', 'smarter.apps.plugin.plugin.base', message);
  }
}

/** Django's `Model.DoesNotExist`, e.g. `LLMClient.DoesNotExist`. */
export class DoesNotExist extends PythonException {
  constructor(model: string, message: string) {
    super('DoesNotExist', `smarter.apps.${model}`, message);
  }
}
