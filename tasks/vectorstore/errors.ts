/** The exceptions Smarter's vectorstore code raises, as Python names them. */
import { PythonException } from '../../lib/errors.js';

/** `service.VectorstoreServiceError`: not possible now, e.g. loading into a vectorstore that is not ready. */
export class VectorstoreServiceError extends PythonException {
  constructor(message: string) {
    super('VectorstoreServiceError', 'smarter.apps.vectorstore.service', message);
  }
}

/** `smarter.common.exceptions.SmarterConfigurationError`: e.g. no embeddings model, or no URL for the database. */
export class SmarterConfigurationError extends PythonException {
  constructor(message: string) {
    super('SmarterConfigurationError', 'smarter.common.exceptions', message);
  }
}

/** A backend Smarter supports that this worker does not (Pinecone): said plainly, never faked. */
export class BackendNotImplemented extends PythonException {
  constructor(vectorstore: string, backend: string) {
    super(
      'NotImplementedError',
      'builtins',
      `Vectorstore ${vectorstore} uses backend ${JSON.stringify(backend)}, which smarter-worker does not implement (it implements qdrant, self-hosted and Qdrant Cloud); run Smarter's Python worker for it`,
    );
  }
}
