// owns: the list of image sources (one line each) and reading a reference through the source of its kind.
import { overlaySource } from './overlay.ts';
import type { ImageSource, SourceDeps, SourceReading, SourceRef } from './source.ts';
import { uploadSource } from './upload.ts';
import { urlSource } from './url.ts';

/** Every source a job or probe may read. Adding one is its file and its line here. */
export const SOURCES: readonly ImageSource[] = [uploadSource, urlSource, overlaySource];

/** The registered sources a reader chooses from (the context's SOURCES; a test may add its own). */
export interface SourceList {
  sources: readonly ImageSource[];
}

/** The bytes behind `ref`, read by the source of its kind. */
export async function readSource(
  deps: SourceDeps & SourceList,
  ref: SourceRef,
  reading: SourceReading,
): Promise<Buffer> {
  const source = deps.sources.find((s) => s.kind === ref.kind);
  if (!source) throw new Error(`no image source reads "${ref.kind}" (src/sources/index.ts lists them)`);
  return source.read(ref, deps, reading);
}
