// owns: which jobs may run in the main process. The rule: a job runs here only when its input kind and
// every operation it uses are on this allow-list, each entry measured to be bounded (docs/security.md, "In-process
// allow-list", with the command that measured it); everything else runs in a killable child. An operation this list
// does not name goes to the children by default, so a new operation starts out isolated until someone measures it
// and adds it here.
import type { InputStructure } from './input-header.ts';
import type { Operations } from './operations.ts';
import { OPERATION_ENTRIES, operationsRunInProcess } from './registry.ts';

/**
 * Most pixels of a JPEG or PNG decoded in-process. Their decoders stream rows, so libvips stops them at its
 * timeout; at 16 MP of noise every allowed job stopped within 0.16 s of a 1 s timeout. Keeps 12 MP phone photos here.
 */
export const IN_PROCESS_MAX_PIXELS = 16_000_000;

/**
 * What runs before libvips can stop anything is kept to about 0.1 s of CPU alone, so that on a loaded machine a job
 * still stops within a second of even a short deadline. Most pixels of a (single-frame) WebP decoded in-process:
 * libwebp decodes the whole image in one call, 0.1 s for 1 MP of noise at quality 100 (0.4 s at 4 MP).
 */
export const IN_PROCESS_MAX_WEBP_PIXELS = 1_000_000;

/**
 * Most pixels × scans of a progressive JPEG decoded in-process: libjpeg decodes every scan before the first row
 * comes out, uninterruptibly, 0.12 s for 4 MP of noise with libjpeg's 10 scans (0.45 s at 16 MP).
 */
export const IN_PROCESS_MAX_SCAN_PIXELS = 40_000_000;

/**
 * The operations allowed in-process, by name: each registry entry's measured `inProcess` (src/pipeline/registry.ts).
 * A name missing here (max_bytes, formats, and any operation added later) sends the job to a child. Searches
 * (quality or format "auto", max_bytes) encode many times, so they are not here; attention and entropy run
 * libvips' saliency passes, not measured.
 */
export const IN_PROCESS_OPERATIONS: Readonly<Record<string, (ops: Operations) => boolean>> =
  Object.fromEntries(
    OPERATION_ENTRIES.flatMap(([name, entry]) => (entry.inProcess ? [[name, entry.inProcess]] : [])),
  );

/** True when the input is a kind measured bounded here: a single-frame JPEG, PNG or WebP read structurally. */
function boundedInput(input: InputStructure): boolean {
  if (!input.readable || input.frames !== 1) return false;
  const pixels = input.width * input.height;
  switch (input.format) {
    case 'jpeg':
      return (
        pixels <= IN_PROCESS_MAX_PIXELS &&
        (!input.progressive || pixels * input.scans <= IN_PROCESS_MAX_SCAN_PIXELS)
      );
    case 'png':
      return pixels <= IN_PROCESS_MAX_PIXELS;
    case 'webp':
      return pixels <= IN_PROCESS_MAX_WEBP_PIXELS;
    default:
      return false;
  }
}

/**
 * The isolation rule: true only when the input (structure read without libvips; undefined when it could not be)
 * and every operation are on the allow-list. The output format when `format` is absent is the input's own (JPEG,
 * PNG or WebP here), which is allowed.
 */
export function runsInProcess(input: InputStructure | undefined, ops: Operations): boolean {
  if (input === undefined || !boundedInput(input)) return false;
  return operationsRunInProcess(ops);
}
