/**
 * An embeddings model behind an OpenAI-compatible `POST {baseUrl}/embeddings` API (OpenAI itself, or any
 * provider or LLMHost that serves one), as Smarter's `vectorstore/embeddings.py` reaches it through LangChain's
 * `OpenAIEmbeddings`. Failures are `CloudError`s of service `embeddings`, with the API's own wording.
 */
export interface EmbeddingsRequest {
  model: string;
  input: string[];
  /** Only for models that take it (text-embedding-3-*), when the manifest sets `spec.embeddings.dimensions`. */
  dimensions?: number;
}

export interface Embeddings {
  /** One vector per input, in the inputs' order. */
  embed(request: EmbeddingsRequest): Promise<number[][]>;
}
