/** The exceptions Smarter's vectorstore code raises, as Python names them. */
import { PythonException } from '../../lib/errors.js';
import { smarterException } from '../errors.js';

/** `service.VectorstoreServiceError`: not possible now, e.g. loading into a vectorstore that is not ready. */
export class VectorstoreServiceError extends smarterException(
  'VectorstoreServiceError',
  'smarter.apps.vectorstore.service',
) {}

/** `smarter.common.exceptions.SmarterConfigurationError`: e.g. no embeddings model, or an unknown backend. */
export class SmarterConfigurationError extends smarterException(
  'SmarterConfigurationError',
  'smarter.common.exceptions',
) {}

/** `backends.base.VectorStoreBackendError`: a vector database operation failed. */
export class VectorStoreBackendError extends PythonException {
  constructor(message: string, type = 'VectorStoreBackendError') {
    super(type, 'smarter.apps.vectorstore.backends.base', message);
  }
}

/** `backends.base.VectorStoreBackendConnectionError`: the database cannot be reached, or has no URL or key. */
export class VectorStoreBackendConnectionError extends VectorStoreBackendError {
  constructor(message: string) {
    super(message, 'VectorStoreBackendConnectionError');
  }
}
