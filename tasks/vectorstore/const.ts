/** Smarter's vectorstore `TextChoices` values (models/vectorstore_meta.py, document.py, snapshot.py) and constants. */
export const VS = {
  PENDING: 'pending',
  PROVISIONING: 'provisioning',
  READY: 'ready',
  STOPPED: 'stopped',
  FAILED: 'failed',
  DELETING: 'deleting',
} as const;
export const DOC = {
  PENDING: 'pending',
  LOADING: 'loading',
  LOADED: 'loaded',
  FAILED: 'failed',
  DELETING: 'deleting',
} as const;
export const SNAP = { CREATING: 'creating', READY: 'ready', FAILED: 'failed' } as const;
export const HOSTING = { SELF_HOSTED: 'self_hosted', MANAGED: 'managed' } as const;

/** `manifest/models/vectorstore/const.py`. */
export const DEFAULTS = {
  chunkSize: 1000,
  chunkOverlap: 200,
  batchSize: 64,
  snapshotIntervalHours: 24,
  snapshotRetention: 7,
} as const;
/** `service.STUCK_AFTER`: a document pending, loading or deleting this long lost its Celery task. */
export const STUCK_AFTER_MINUTES = 30;
/** `kubernetes.py`: a self-hosted server's label and HTTP port. */
export const LABEL = 'smarter.sh/vectorstore';
export const HTTP_PORT = 6333;
/** `backends/qdrant.py`: chunks are found by document when it is deleted or loaded again. */
export const DOCUMENT_ID_KEY = 'metadata.document_id';
/** Form feeds separate a document's pages (`document.PAGE_BREAK`). */
export const PAGE_BREAK = '\f';
