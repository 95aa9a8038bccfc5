/**
 * A chunk's point id: `uuid.uuid5(uuid.NAMESPACE_URL, f"smarter:vectorstore:{vectorstore_id}:{document_id}:{index}")`,
 * as Smarter's `VectorstoreDocument.chunk_id` derives it (Qdrant takes a UUID or an integer), so loading a
 * document again replaces its chunks and either worker can remove the other's.
 */
import { createHash } from 'node:crypto';

const NAMESPACE_URL = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');

export function uuid5(namespace: Buffer, name: string): string {
  const hash = createHash('sha1').update(namespace).update(name, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const chunkId = (vectorstoreId: number, documentId: number, index: number): string =>
  uuid5(NAMESPACE_URL, `smarter:vectorstore:${vectorstoreId}:${documentId}:${index}`);

export const chunkIds = (vectorstoreId: number, documentId: number, count: number): string[] =>
  Array.from({ length: count }, (_, i) => chunkId(vectorstoreId, documentId, i));
