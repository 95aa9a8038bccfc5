export * from './values.js';
export * from './types.js';
export { decodeTaskMessage, type DecodeOptions } from './decode.js';
export { encodeTaskMessage, type EncodedMessage, type OutgoingTask, type PublishProperties } from './encode.js';
export { parseKombuJson, stringifyKombuJson } from './json.js';
export { decodeContent, encodeContent, type Serializer } from './content.js';
export { pyRepr, pyTupleRepr, truncate } from './repr.js';
