/**
 * `LLMHostService.authorize_budgets` (`smarter/apps/llmhost/services/service.py`): before anything is applied, a
 * launch asks `charge_authorization` (`smarter/apps/account/models/budget.py`) for the LLMHost's compute (once it
 * has one), its owner and their account. A resource held by an unexpired lock of an active budget refuses it
 * with the lock's message: the budget's own, else the lock's reason.
 */
import { PythonException } from '../../lib/errors.js';
import { resourceLockMessage } from '../account/index.js';
import type { Queryable } from '../db/database.js';
import { recordLocator } from '../db/django.js';
import type { LlmhostRow } from './rows.js';

/** Smarter's `LLMHostBudgetExceeded`. */
export class LLMHostBudgetExceeded extends PythonException {
  constructor(message: string) {
    super('LLMHostBudgetExceeded', 'smarter.apps.llmhost.services.exceptions', message);
  }
}

/** The refusal message of the first locked of the LLMHost's compute, owner and account, or null when none is. */
export async function budgetRefusal(db: Queryable, host: LlmhostRow, accountId: number): Promise<string | null> {
  const locators = [
    ...(host.computeId !== null ? [recordLocator('LLMHostCompute', host.computeId)] : []),
    recordLocator('UserProfile', host.userProfileId),
    recordLocator('Account', accountId),
  ];
  for (const locator of locators) {
    const message = await resourceLockMessage(db, locator);
    if (message) return message;
  }
  return null;
}
