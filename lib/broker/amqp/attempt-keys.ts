/**
 * The keys of attempt-table.ts: which slot holds an attempt (`<id>:<retries>`), in typed arrays only. A worker
 * meets every attempt and the table is full at its bound, so a Map of key strings would hold a hundred thousand
 * strings and entries on the heap (about 130 bytes each, every one traced by each full collection); here an
 * attempt whose id is a UUID as Celery makes them (lowercase, hyphenated) is kept as four words and its retries,
 * about 40 bytes, nothing for the collector to trace. Any other id is kept as its text: a task id is compared
 * exactly, never by a hash alone.
 *
 * An open-addressing index (linear probing, at most half full, backward-shift deletion) maps a key's hash to
 * its slot.
 */

const EMPTY = 0;
const PACKED = 1;
const TEXT = 2;

/** A UUID's 36 characters; hyphens at these places. */
const UUID_LENGTH = 36;
const HYPHENS = [8, 13, 18, 23];
/** Retries in canonical decimal (copies.ts writes a number as `String` does) that a Uint32 holds. */
const MAX_RETRY_DIGITS = 9;

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

export class AttemptKeys {
  /** Slot + 1 at a key's place, 0 where none is. */
  private readonly index: Int32Array;
  private readonly mask: number;
  private readonly kind: Uint8Array;
  private readonly hashes: Uint32Array;
  private readonly words: Uint32Array;
  private readonly retries: Uint32Array;
  private readonly texts = new Map<number, string>();
  /**
   * The key parsed last (parse()): packed or not, its words, retries and hash. Kept here to allocate nothing, and
   * reused when the next key is the same: a delivery looks its attempt up, then takes a slot for it.
   */
  private last: string | undefined;
  private packed = false;
  private readonly w = new Uint32Array(4);
  private r = 0;
  private h = 0;

  constructor(max: number) {
    let size = 8;
    while (size < max * 2) size *= 2;
    this.index = new Int32Array(size);
    this.mask = size - 1;
    this.kind = new Uint8Array(max);
    this.hashes = new Uint32Array(max);
    this.words = new Uint32Array(max * 4);
    this.retries = new Uint32Array(max);
  }

  /** The slot holding `key`, or undefined. */
  find(key: string): number | undefined {
    this.parse(key);
    for (let p = this.h & this.mask; ; p = (p + 1) & this.mask) {
      const e = this.index[p] ?? 0;
      if (e === 0) return undefined;
      if (this.holds(e - 1, key)) return e - 1;
    }
  }

  /** Puts `key` in `slot` (one holding nothing: see clear). */
  set(slot: number, key: string): void {
    this.parse(key);
    this.hashes[slot] = this.h;
    if (this.packed) {
      this.kind[slot] = PACKED;
      this.words.set(this.w, slot * 4);
      this.retries[slot] = this.r;
    } else {
      this.kind[slot] = TEXT;
      this.texts.set(slot, key);
    }
    let p = this.h & this.mask;
    while ((this.index[p] ?? 0) !== 0) p = (p + 1) & this.mask;
    this.index[p] = slot + 1;
  }

  /** Forgets the key in `slot`, if any. */
  clear(slot: number): void {
    if (this.kind[slot] === EMPTY) return;
    let i = (this.hashes[slot] ?? 0) & this.mask;
    while ((this.index[i] ?? 0) !== slot + 1) i = (i + 1) & this.mask;
    // Backward shift: a key further on whose probe passed through `i` moves into it, so no probe stops short.
    for (let j = (i + 1) & this.mask; ; j = (j + 1) & this.mask) {
      const e = this.index[j] ?? 0;
      if (e === 0) break;
      const home = (this.hashes[e - 1] ?? 0) & this.mask;
      const inReach = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!inReach) {
        this.index[i] = e;
        i = j;
      }
    }
    this.index[i] = 0;
    this.kind[slot] = EMPTY;
    this.texts.delete(slot);
  }

  private holds(slot: number, key: string): boolean {
    if (this.hashes[slot] !== this.h) return false;
    if (!this.packed) return this.kind[slot] === TEXT && this.texts.get(slot) === key;
    const at = slot * 4;
    const { w, words } = this;
    return (
      this.kind[slot] === PACKED &&
      words[at] === w[0] &&
      words[at + 1] === w[1] &&
      words[at + 2] === w[2] &&
      words[at + 3] === w[3] &&
      this.retries[slot] === this.r
    );
  }

  private parse(key: string): void {
    if (key === this.last) return;
    this.last = key;
    this.packed = this.parseUuidKey(key);
    let h: number;
    if (this.packed) {
      const { w } = this;
      h = Math.imul((w[0] ?? 0) ^ this.r, 0x9e3779b1);
      h = Math.imul(h ^ (w[1] ?? 0) ^ (h >>> 15), 0x85ebca6b);
      h = Math.imul(h ^ (w[2] ?? 0) ^ (h >>> 13), 0xc2b2ae35);
      h = Math.imul(h ^ (w[3] ?? 0) ^ (h >>> 16), 0x27d4eb2f);
    } else {
      h = 0x811c9dc5;
      for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    }
    this.h = (h ^ (h >>> 15)) >>> 0;
  }

  /** Whether `key` is `<lowercase hyphenated UUID>:<retries in canonical decimal>`; if so, its words and retries. */
  private parseUuidKey(key: string): boolean {
    const digits = key.length - UUID_LENGTH - 1;
    if (digits < 1 || digits > MAX_RETRY_DIGITS || key.charCodeAt(UUID_LENGTH) !== 58) return false;
    let r = 0;
    for (let i = UUID_LENGTH + 1; i < key.length; i++) {
      const d = key.charCodeAt(i) - 48;
      if (d < 0 || d > 9 || (d === 0 && i === UUID_LENGTH + 1 && digits > 1)) return false;
      r = r * 10 + d;
    }
    let word = 0;
    let nibbles = 0;
    let hyphen = 0;
    for (let i = 0; i < UUID_LENGTH; i++) {
      const code = key.charCodeAt(i);
      if (i === HYPHENS[hyphen]) {
        if (code !== 45) return false;
        hyphen++;
        continue;
      }
      const v = hexValue(code);
      if (v < 0) return false;
      word = (word << 4) | v;
      if (++nibbles % 8 === 0) {
        this.w[nibbles / 8 - 1] = word;
        word = 0;
      }
    }
    this.r = r;
    return true;
  }
}
