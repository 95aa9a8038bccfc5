/** The splitter and chunk ids must give the chunks, and the point ids, that Smarter's Python worker gives. */
import { chunkId, chunkIds } from '../../tasks/vectorstore/chunk-ids.js';
import { RecursiveCharacterTextSplitter } from '../../tasks/vectorstore/splitter.js';

const split = (text: string, size: number, overlap: number) =>
  new RecursiveCharacterTextSplitter(size, overlap).splitText(text);

describe("RecursiveCharacterTextSplitter, as LangChain's splits", () => {
  test('words merge up to chunk_size inclusive; the separator starts the next piece and is stripped', () => {
    expect(split('hello world foo', 11, 0)).toEqual(['hello world', 'foo']);
  });

  test('a piece with no separator left splits by character, and consecutive chunks overlap', () => {
    expect(split('abcdefgh', 3, 1)).toEqual(['abc', 'cde', 'efg', 'gh']);
  });

  test('overlap is dropped when keeping it would overflow the next chunk', () => {
    expect(split('aa bb cc dd', 5, 3)).toEqual(['aa bb', 'cc', 'dd']);
  });

  test('paragraphs are the first separator, and a short text is one chunk with its inner breaks', () => {
    expect(split('p1 text\n\np2', 100, 10)).toEqual(['p1 text\n\np2']);
    expect(split('one one\n\ntwo two', 8, 0)).toEqual(['one one', 'two two']);
  });

  test('length counts code points, as Python len does, not UTF-16 units', () => {
    expect(split('😀😀😀😀', 2, 0)).toEqual(['😀😀', '😀😀']);
  });

  test("an empty or blank text has no chunks; an overlap above the size is refused with LangChain's words", () => {
    expect(split('', 10, 0)).toEqual([]);
    expect(split(' \n\n  ', 10, 0)).toEqual([]);
    expect(() => split('x', 10, 20)).toThrow(
      'Got a larger chunk overlap (20) than chunk size (10), should be smaller.',
    );
  });
});

describe('chunk ids', () => {
  test("are Python's uuid5(NAMESPACE_URL, 'smarter:vectorstore:<vectorstore>:<document>:<index>')", () => {
    // python3 -c "import uuid; print(uuid.uuid5(uuid.NAMESPACE_URL, 'smarter:vectorstore:3:7:2'))"
    expect(chunkId(3, 7, 2)).toBe('a2d1d597-d6fd-50f0-9fee-784703873297');
    expect(chunkIds(3, 7, 3)).toEqual([chunkId(3, 7, 0), chunkId(3, 7, 1), chunkId(3, 7, 2)]);
  });
});
