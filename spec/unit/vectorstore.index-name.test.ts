/**
 * The index or collection of a vectorstore whose `index_name` is empty: Smarter's
 * `SmarterVectorstoreBackend.index_name` (`smarter/smarter/apps/vectorstore/backends/base.py`) falls back to
 * `VectorstoreMeta.default_index_name()` (`smarter/smarter/apps/vectorstore/models/vectorstore_meta.py`), which
 * `smarter/smarter/apps/vectorstore/tests/test_models.py` (`test_names`) checks for the self-hosted and managed cases.
 */
import { defaultIndexName, indexName } from '../../tasks/vectorstore/backend.js';

const vs = (name: string, backend: string, hosting: string, accountNumber = '3141-5926-5358') => ({
  name,
  backend,
  hosting,
  accountNumber,
});

describe('default_index_name()', () => {
  test.each([
    // self-hosted: the name alone (test_models: name.replace("_", "-"))
    [vs('test_models_names', 'qdrant', 'self_hosted'), 'test-models-names'],
    // Qdrant Cloud: the name and the account number's digits
    [vs('test_models_managed', 'qdrant', 'managed'), 'test-models-managed-314159265358'],
    // runs of other characters are one hyphen, and hyphens at either end go
    [vs('__Team KB: Q&A!!', 'qdrant', 'managed'), 'team-kb-q-a-314159265358'],
    [vs('-Hand--Book-', 'qdrant', 'self_hosted'), 'hand--book'],
    // Pinecone: the name cut so that `-<digits>` fits 45 characters
    [vs('kb', 'pinecone', 'managed'), 'kb-314159265358'],
    [vs('a'.repeat(60), 'pinecone', 'managed'), `${'a'.repeat(32)}-314159265358`],
    // a cut that ends on a hyphen leaves two, as Python's slice and strip do
    [vs(`${'a'.repeat(31)}-b`, 'pinecone', 'managed'), `${'a'.repeat(31)}--314159265358`],
    // no digits in the account number: Pinecone's trailing hyphen is stripped, Qdrant Cloud's is not
    [vs('kb', 'pinecone', 'managed', 'acct'), 'kb'],
    [vs('kb', 'qdrant', 'managed', 'acct'), 'kb-'],
  ])('%j → %s', (v, expected) => {
    expect(defaultIndexName(v)).toBe(expected);
    expect(expected.length).toBeLessThanOrEqual(v.backend === 'pinecone' ? 45 : 255);
  });

  test('an account number longer than a Pinecone name allows cuts from the end of the name, as a negative slice does', () => {
    // 45 - 50 - 1 = -6: Python's name[:-6]
    expect(defaultIndexName(vs('abcdefghij', 'pinecone', 'managed', '9'.repeat(50)))).toBe(`abcd-${'9'.repeat(50)}`);
  });
});

describe('SmarterVectorstoreBackend.index_name', () => {
  test('the recorded index_name is used as it is', () => {
    expect(indexName({ ...vs('KB One', 'pinecone', 'managed'), indexName: 'handbook-3141' })).toBe('handbook-3141');
  });

  test('an empty index_name is default_index_name(), not a refusal', () => {
    expect(indexName({ ...vs('KB One', 'pinecone', 'managed'), indexName: '' })).toBe('kb-one-314159265358');
  });
});
