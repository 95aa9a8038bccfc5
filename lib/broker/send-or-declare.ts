/**
 * A send whose target may have been deleted since it was declared (by hand, by a policy, by a queue's
 * expiry): every broker's `send` says so with `BROKER_UNROUTABLE` instead of dropping the message
 * (broker.ts), and every caller answers the same way, here: declare the target again and send once more.
 * A second failure is the caller's to report.
 */
import { hasCode } from '../errors.js';

/**
 * Runs `send`; when it fails with `BROKER_UNROUTABLE`, runs `declare` (which may rethrow the error it is
 * given, when there is nothing it can declare) and `send` once more. Any other failure is thrown as it is.
 */
export async function sendOrDeclare(
  send: () => Promise<void>,
  declare: (unroutable: unknown) => Promise<void>,
): Promise<void> {
  try {
    await send();
  } catch (err) {
    if (!hasCode(err, 'BROKER_UNROUTABLE')) throw err;
    await declare(err);
    await send();
  }
}
