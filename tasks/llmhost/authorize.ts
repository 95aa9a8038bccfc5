/**
 * `LLMHostService.authorize_budgets` (`smarter/apps/llmhost/services/service.py`): before anything is applied, a
 * launch asks `charge_authorization` (`smarter/apps/account/models/budget.py`) for the LLMHost's compute (once it
 * has one), its owner and their account. A resource held by an unexpired lock of an active budget refuses it
 * with the lock's message: the budget's own, else the lock's reason.
 */
import { PythonException } from '../../lib/errors.js';
import type { Queryable } from '../db/database.js';
import { NOW, recordLocator } from '../db/django.js';
import type { LlmhostRow } from './rows.js';

/** Smarter's `LLMHostBudgetExceeded`. */
export class LLMHostBudgetExceeded extends PythonException {
  constructor(message: string) {
    super('LLMHostBudgetExceeded', 'smarter.apps.llmhost.services.exceptions', message);
  }
}

/** `get_resource_lock_message(locator)`: the message a charge to the resource is refused with, or null. */
async function lockMessage(db: Queryable, locator: string): Promise<string | null> {
  const [row] = await db.select(
    `SELECT l.reason, b.message FROM account_resourcelock l
       JOIN account_resourceconstraint c ON c.id = l.resource_constraint_id
       LEFT JOIN account_budget b ON b.id = c.budget_id
      WHERE l.resource_locator = ? AND c.is_active = 1 AND (l.expiration_date IS NULL OR l.expiration_date > ${NOW})
      ORDER BY l.id LIMIT 1`,
    [locator],
  );
  if (!row) return null;
  const budgetMessage = typeof row.message === 'string' ? row.message : '';
  const reason = typeof row.reason === 'string' ? row.reason : '';
  return budgetMessage || reason || 'A budget forbids more charges.';
}

/** The refusal message of the first locked of the LLMHost's compute, owner and account, or null when none is. */
export async function budgetRefusal(db: Queryable, host: LlmhostRow, accountId: number): Promise<string | null> {
  const locators = [...(host.computeId !== null ? [recordLocator('LLMHostCompute', host.computeId)] : []), recordLocator('UserProfile', host.userProfileId), recordLocator('Account', accountId)];
  for (const locator of locators) {
    const message = await lockMessage(db, locator);
    if (message) return message;
  }
  return null;
}
