import { WORKER_SETTINGS } from '../../lib/app/worker-settings.js';
import { answerInfoFlags, packageVersion, usage } from '../../lib/config/usage.js';

const info = {
  program: 'prog',
  summary: 'Does things.',
  settings: WORKER_SETTINGS,
  commands: [
    { name: 'run', summary: 'Runs.' },
    { name: 'extra [x]', summary: 'Another one.' },
  ],
};

test('the usage lists every flag, every environment variable behind a setting, and every subcommand passed in', () => {
  const text = usage(info);
  for (const s of Object.values(WORKER_SETTINGS)) {
    if (s.flag) expect(text).toContain(`--${s.flag.long}`);
    if (s.flag?.short) expect(text).toContain(`-${s.flag.short}, --${s.flag.long}`);
    for (const e of s.env) expect(text).toContain(e);
  }
  expect(text).toMatch(/^Usage: prog \[command\] \[options\]/);
  expect(text).toMatch(/\n {2}run +Runs\.\n {2}extra \[x\] +Another one\./);
  expect(text).toContain('-h, --help');
  expect(text).toContain('--version');
});

test('-h, --help and --version are answered with exit 0; anything else is left to the configuration loader', () => {
  const out: string[] = [];
  const say = (t: string) => void out.push(t);
  expect(answerInfoFlags(['-Q', 'a', '--help'], info, say)).toBe(0);
  expect(out.pop()).toContain('Usage: prog');
  expect(answerInfoFlags(['-h'], info, say)).toBe(0);
  expect(answerInfoFlags(['--version'], info, say)).toBe(0);
  expect(out.pop()).toBe(`prog ${packageVersion()}\n`);
  expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  expect(answerInfoFlags(['--bogus', '-Q', 'a'], info, say)).toBeNull();
  expect(answerInfoFlags(['--', '--help'], info, say)).toBeNull();
});
