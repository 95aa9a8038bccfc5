import fs from 'node:fs';

test('the README names the test command that .ci/run runs', () => {
  expect(fs.readFileSync('README.md', 'utf8')).toContain('```sh\nnpm test\n```');
  expect(fs.readFileSync('.ci/run', 'utf8')).toMatch(/^timeout \d+m npm test$/m);
});

test('the README stays short, and its table leads to every page of docs/', () => {
  const readme = fs.readFileSync('README.md', 'utf8');
  expect(readme.split('\n').length).toBeLessThan(200);
  const top = fs.readdirSync('docs').filter((f) => f.endsWith('.md'));
  for (const page of top) expect([page, readme.includes(`](docs/${page})`)]).toEqual([page, true]);
});
