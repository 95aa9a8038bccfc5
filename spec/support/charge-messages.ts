/** create_charge messages as Smarter's Python sends them, for the tests that count rows and sum costs. */
import type { Options } from 'amqplib';
import { celeryMessage } from './amqp.js';

export interface ChargeMessage {
  id: string;
  /** The charge's total_cost (DECIMAL text), to sum against the table's. */
  cost: string;
  body: string;
  options: Options.Publish;
}

/**
 * `count` charges by keyword arguments: resources `<tag>/0` to `<tag>/<resources - 1>` in turn, and costs whose whole
 * part cycles below `wholeBelow` and whose 8 decimals differ at every digit, so a sum shows one lost or doubled row.
 */
export function chargeMessages(
  count: number,
  o: { tag: string; resources: number; wholeBelow: number },
): ChargeMessage[] {
  return Array.from({ length: count }, (_v, i) => {
    const kwargs = {
      resource_locator: `${o.tag}/${i % o.resources}`,
      charge_type: 'completion',
      prompt_tokens: i,
      completion_tokens: 1,
      total_tokens: i + 1,
      total_cost: `${i % o.wholeBelow}.${String(i * 7919)
        .padStart(8, '0')
        .slice(-8)}`,
    };
    return { ...celeryMessage('smarter.apps.account.tasks.create_charge', kwargs), cost: kwargs.total_cost };
  });
}
