import fs from 'node:fs';
import { settingsTable } from '../../lib/config/settings.js';
import { BEAT_SETTINGS } from '../../beat/settings.js';
import { SETTINGS } from '../../tasks/settings.js';

test("the README's configuration table is the one generated from the settings' declarations", () => {
  const readme = fs.readFileSync('README.md', 'utf8');
  expect(readme).toContain(settingsTable(SETTINGS));
  expect(readme).toContain(settingsTable(BEAT_SETTINGS));
});

test('the README names the test command that .ci/run runs', () => {
  expect(fs.readFileSync('README.md', 'utf8')).toContain('```sh\nnpm test\n```');
  expect(fs.readFileSync('.ci/run', 'utf8')).toMatch(/^timeout \d+m npm test$/m);
});
