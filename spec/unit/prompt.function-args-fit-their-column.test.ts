/** create_prompt_tool_call_history's `function_args`, fitted to its VARCHAR(255) column as Django would store it. */
import { fitFunctionArgs } from '../../tasks/prompt/create-prompt-tool-call-history.js';

test('function_args that fit are stored unchanged; longer ones are cut to 255 characters ending in an ellipsis', () => {
  expect(fitFunctionArgs('{"city": "Paris"}')).toEqual({ text: '{"city": "Paris"}', cut: false });
  expect(fitFunctionArgs({ city: 'Paris' })).toEqual({ text: '{"city": "Paris"}', cut: false });
  const long = fitFunctionArgs(`{"q": "${'é'.repeat(400)}"}`);
  expect(long.cut).toBe(true);
  expect([...(long.text ?? '')]).toHaveLength(255);
  expect(long.text?.endsWith('…')).toBe(true);
});
