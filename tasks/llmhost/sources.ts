/**
 * Where an LLMHost's weights come from, as Smarter's `services/sources.py` resolves `spec.model`: how the engine
 * refers to them, and the init container, for S3 and URL models, that copies them to the model volume first.
 */
import { MODELS_MOUNT_PATH } from './const.js';
import type { LlmhostSpec, ModelSource } from './spec-model.js';
import { LLMHostConfigurationError } from './spec.js';

export const MODELS_VOLUME = 'models';
export const S3_DOWNLOAD_IMAGE = 'amazon/aws-cli:latest';
export const URL_DOWNLOAD_IMAGE = 'curlimages/curl:latest';

/** Python's `posixpath.join`: an absolute part starts over; nothing is normalized. */
export function joinPath(first: string, ...rest: string[]): string {
  let out = first;
  for (const part of rest) {
    if (part.startsWith('/')) out = part;
    else if (out === '' || out.endsWith('/')) out += part;
    else out += `/${part}`;
  }
  return out;
}

const LOCAL_MODELS_PATH = joinPath(MODELS_MOUNT_PATH, 'local');

export interface InitContainer {
  name: string;
  image: string;
  command: string[];
  volumeMounts: { name: string; mountPath: string }[];
}

/** `ResolvedModel`. */
export interface ResolvedModel {
  source: ModelSource;
  /** The repository id, tag or local path that the engine loads. */
  reference: string;
  /** The Hugging Face revision, when the engine downloads from Hugging Face. */
  revision: string | null;
  /** One weights file within the repository, if any. */
  file: string | null;
  /** Whether `reference` is a path on the model volume. */
  local: boolean;
  initContainers: InitContainer[];
}

/** The local path of the weights, with the file, if any. */
export const modelPath = (m: ResolvedModel) => (m.file ? joinPath(m.reference, m.file) : m.reference);

/** The last segment of a URL's path, as `posixpath.basename(urlparse(url).path)`. */
function urlFileName(url: string): string {
  const afterScheme = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, '');
  const path = afterScheme.startsWith('//') ? afterScheme.slice(2).replace(/^[^/?#]*/, '') : afterScheme;
  const bare = path.split(/[?#]/, 1)[0] ?? '';
  return bare.slice(bare.lastIndexOf('/') + 1);
}

const download = (image: string, command: string[]): InitContainer => ({
  name: 'download-model',
  image,
  command,
  volumeMounts: [{ name: MODELS_VOLUME, mountPath: MODELS_MOUNT_PATH }],
});

/**
 * `resolve_model`.
 * @param slug The LLMHost's DNS-safe name (its resources' base name), for local paths.
 */
export function resolveModel(model: LlmhostSpec['model'], slug: string): ResolvedModel {
  const base = { source: model.source, revision: null, file: null, local: false, initContainers: [] };
  const target = joinPath(LOCAL_MODELS_PATH, slug);
  switch (model.source) {
    case 'huggingface':
      // The engine downloads it itself, with HF_TOKEN for gated models.
      return { ...base, reference: model.repository, revision: model.revision || 'main', file: model.file };
    case 'ollama':
      return { ...base, reference: model.repository };
    case 's3':
      // Credentials come from the pod's service account.
      return {
        ...base,
        reference: target,
        file: model.file,
        local: true,
        initContainers: [
          download(S3_DOWNLOAD_IMAGE, ['aws', 's3', 'sync', '--only-show-errors', model.repository, target]),
        ],
      };
    case 'url': {
      const file = model.file || urlFileName(model.repository);
      if (!file) {
        throw new LLMHostConfigurationError(`model.file: is required, because ${model.repository} has no file name.`);
      }
      // The URL and path are the script's arguments, never part of it; a file already there is kept.
      const script =
        'test -s "$2" || { mkdir -p "$(dirname "$2")" && curl -fsSL -o "$2.partial" "$1" && mv "$2.partial" "$2"; }';
      const command = ['/bin/sh', '-c', script, 'download', model.repository, joinPath(target, file)];
      return { ...base, reference: target, file, local: true, initContainers: [download(URL_DOWNLOAD_IMAGE, command)] };
    }
    case 'pvc':
      // Weights already on the volume of storage.existingClaim.
      return { ...base, reference: joinPath(MODELS_MOUNT_PATH, model.repository), file: model.file, local: true };
  }
}
