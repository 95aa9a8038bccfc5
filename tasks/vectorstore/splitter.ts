/**
 * LangChain's `RecursiveCharacterTextSplitter` as Smarter constructs it (`chunk_size`, `chunk_overlap`, the rest
 * default: separators `["\n\n", "\n", " ", ""]`, `keep_separator=True` (each separator starts the next piece),
 * `strip_whitespace=True`, `length_function=len`), so a document splits into the chunks the Python worker made
 * and the chunk ids, which are derived from each chunk's index, stay the same. Lengths count code points as
 * Python's `len` does, not UTF-16 units.
 */
import { SmarterValueError } from '../errors.js';

const SEPARATORS = ['\n\n', '\n', ' ', ''];

const len = (s: string): number => {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `_split_text_with_regex(text, re.escape(separator), keep_separator=True)`. */
function splitKeeping(text: string, separator: string): string[] {
  if (separator === '') return Array.from(text).filter((s) => s !== '');
  const parts = text.split(new RegExp(`(${escape(separator)})`));
  const out: string[] = [parts[0] ?? ''];
  for (let i = 1; i < parts.length; i += 2) out.push((parts[i] ?? '') + (parts[i + 1] ?? ''));
  // Python's loop pairs (sep, next) and, for an even-length list, keeps the last part alone; `split` with a
  // capture group always yields an odd count, so each separator already has its following text.
  return out.filter((s) => s !== '');
}

export class RecursiveCharacterTextSplitter {
  constructor(
    private readonly chunkSize: number,
    private readonly chunkOverlap: number,
  ) {
    if (chunkOverlap > chunkSize) {
      throw new SmarterValueError(
        `Got a larger chunk overlap (${chunkOverlap}) than chunk size (${chunkSize}), should be smaller.`,
      );
    }
  }

  splitText(text: string): string[] {
    return this.split(text, SEPARATORS);
  }

  private split(text: string, separators: readonly string[]): string[] {
    let separator = separators[separators.length - 1] ?? '';
    let rest: readonly string[] = [];
    for (let i = 0; i < separators.length; i += 1) {
      const s = separators[i] ?? '';
      if (s === '') {
        separator = s;
        break;
      }
      if (text.includes(s)) {
        separator = s;
        rest = separators.slice(i + 1);
        break;
      }
    }
    const chunks: string[] = [];
    let good: string[] = [];
    for (const piece of splitKeeping(text, separator)) {
      if (len(piece) < this.chunkSize) {
        good.push(piece);
        continue;
      }
      if (good.length > 0) {
        chunks.push(...this.merge(good));
        good = [];
      }
      if (rest.length === 0) chunks.push(piece);
      else chunks.push(...this.split(piece, rest));
    }
    if (good.length > 0) chunks.push(...this.merge(good));
    return chunks;
  }

  /** `_merge_splits` with the separator kept in the pieces, so joined with "". */
  private merge(pieces: string[]): string[] {
    const docs: string[] = [];
    let current: string[] = [];
    let total = 0;
    for (const piece of pieces) {
      const n = len(piece);
      if (total + n > this.chunkSize && current.length > 0) {
        const doc = current.join('').trim();
        if (doc !== '') docs.push(doc);
        while (total > this.chunkOverlap || (total + n > this.chunkSize && total > 0)) {
          total -= len(current[0] ?? '');
          current = current.slice(1);
        }
      }
      current.push(piece);
      total += n;
    }
    const doc = current.join('').trim();
    if (doc !== '') docs.push(doc);
    return docs;
  }
}
