/**
 * `create_plugin_selector_history(*args, **kwargs)`: which plugin was selected, for what. Outcomes follow
 * Smarter: a deleted user is a warning, an unknown plugin or one without a selector is logged and dropped,
 * a user without a profile raises SmarterPluginError (retried).
 */
import * as z from 'zod';
import { djangoJson, exists, insertModel } from '../db/django.js';
import { SESSION_KEY_NAME, pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { SmarterPluginError } from '../errors.js';
import { firstProfileOfUser, selectorOfPlugin } from './rows.js';

const params = z.object({
  user_profile_id: pk().nullish(),
  user_id: pk().nullish(),
  plugin_id: pk(),
  input_text: z.string().nullish(),
  messages: z.unknown().optional(),
  search_term: z.string().max(255).nullish(),
  [SESSION_KEY_NAME]: z.string().max(255).nullish(),
});

export const createPluginSelectorHistory = (env: TaskEnv) =>
  recordTask<z.output<typeof params>, null>(env, {
    name: 'smarter.apps.plugin.tasks.create_plugin_selector_history',
    varArgs: true,
    params,
    async run(p, ctx) {
      const { db } = ctx.deps;
      let profileId: number | null = null;
      if (p.user_profile_id != null && (await exists(db, 'account_userprofile', p.user_profile_id))) {
        profileId = p.user_profile_id;
      } else if (p.user_id != null) {
        if (!(await exists(db, 'auth_user', p.user_id))) {
          ctx.logger.warn('create_plugin_selector_history: user was deleted; nothing recorded', { user_id: p.user_id });
          return null;
        }
        profileId = await firstProfileOfUser(db, p.user_id);
      }
      if (profileId === null) {
        throw new SmarterPluginError(
          `could not resolve a user profile (user_profile_id=${p.user_profile_id ?? 'None'}, user_id=${p.user_id ?? 'None'})`,
        );
      }
      if (!(await exists(db, 'plugin_pluginmeta', p.plugin_id))) {
        ctx.logger.error('create_plugin_selector_history: plugin does not exist', { plugin_id: p.plugin_id });
        return null;
      }
      const selectorId = await selectorOfPlugin(db, p.plugin_id);
      if (selectorId === null) {
        ctx.logger.error('create_plugin_selector_history: plugin has no selector', { plugin_id: p.plugin_id });
        return null;
      }
      await insertModel(db, 'plugin_pluginselectorhistory', {
        plugin_selector_id: selectorId,
        search_term: p.search_term ?? '',
        messages: djangoJson(p.input_text ? { input_text: p.input_text } : (p.messages ?? [])),
        session_key: p[SESSION_KEY_NAME] ?? '',
      });
      return null;
    },
  });
