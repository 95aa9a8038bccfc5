/**
 * An embeddings model behind an OpenAI-compatible `POST {baseUrl}/embeddings` API (OpenAI itself, or any
 * provider or LLMHost that serves one), as Smarter's `vectorstore/embeddings.py` reaches it through LangChain's
 * `OpenAIEmbeddings`, each vectorstore with its own Provider's URL and key. Failures are `CloudError`s of service `embeddings`, with the API's own wording.
 */
/** Where a vectorstore's embeddings are made: its Provider's API, with its key. */
export interface EmbeddingsEndpoint {
  /** The API's base URL, e.g. `https://api.openai.com/v1`; `/embeddings` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer` (never logged). */
  apiKey: string;
}

export interface EmbeddingsRequest {
  model: string;
  input: string[];
  /** Only for models that take it (text-embedding-3-*), when the manifest sets `spec.embeddings.dimensions`. */
  dimensions?: number;
}

export interface Embeddings {
  /** One vector per input, in the inputs' order. */
  embed(endpoint: EmbeddingsEndpoint, request: EmbeddingsRequest): Promise<number[][]>;
}
