// One format for every source file, checked by `npm run lint` (prettier --check) in CI.
export default {
  printWidth: 120,
  singleQuote: true,
  trailingComma: 'all',
};
