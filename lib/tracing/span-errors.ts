/** An error on a span as the logs show it: Celery's exception type, and a message whose URLs hide their password. */
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { exceptionInfo } from '../backend/meta.js';
import { redactUrl } from '../config/settings.js';

/** An exception message in a span: a password in a URL is hidden, as in the logs. */
export function redacted(message: string): string {
  return message
    .split(/(\s+)/)
    .map((part) => (part.includes('://') ? redactUrl(part) : part))
    .join('');
}

export function recordError(span: Span, err: Error): void {
  const info = exceptionInfo(err);
  const message = redacted(err.message);
  span.recordException({ name: info.exc_type, message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: `${info.exc_type}: ${message}` });
}
