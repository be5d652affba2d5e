import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { DocumentNode } from 'graphql';

/**
 * Apollo keeps every distinct query text it has parsed and validated, so a repeated query skips both. It weighs a
 * document by the length of its JSON text, and a parsed document takes about 4 times that in memory (its token
 * list and locations), so Apollo's default of 30 MiB could hold ~120 MB of documents sent by anyone with a key.
 * 2 MiB (~8 MB in memory) still holds some 350 documents the size of a full products query; the least recently
 * used go first.
 */
export const DOCUMENT_STORE_BYTES = 2 * 2 ** 20;

export const boundedDocumentStore = () => new InMemoryLRUCache<DocumentNode>({ maxSize: DOCUMENT_STORE_BYTES });
