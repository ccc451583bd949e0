// owns: which jobs may run in the main process. The rule: a job runs here only when its input kind and
// every operation it uses are on this allow-list, each entry measured to be bounded (docs/security.md, "In-process
// allow-list", with the command that measured it); everything else runs in a killable child. An operation this list
// does not name goes to the children by default, so a new operation starts out isolated until someone measures it
// and adds it here.
import { formatRow, IN_PROCESS_MAX_PIXELS, type OutputFormat } from './formats.ts';
import type { InputStructure } from './input-header.ts';
import type { Operations } from './operations.ts';
import { OPERATION_ENTRIES, operationsRunInProcess } from './registry.ts';

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

/**
 * True when the input is a kind measured bounded here: a single frame read structurally, within its format's
 * in-process rule (formats.ts: JPEG, PNG and WebP up to their sizes).
 */
function boundedInput(input: InputStructure): boolean {
  if (!input.readable || input.frames !== 1) return false;
  return formatRow(input.format).inProcess?.(input) === true;
}

/**
 * The outputs allowed past IN_PROCESS_MAX_PIXELS (a single-scan JPEG up to 40 MP): at 40 MP of noise a JPEG q100
 * encode peaked at 235 MB and a PNG at 38 MB, where libwebp holds the whole picture (1.2 GB; docs/security.md).
 */
const STREAMED_OUTPUTS: ReadonlySet<string> = new Set<OutputFormat>(['jpeg', 'png']);

/**
 * The isolation rule: true only when the input (structure read without libvips; undefined when it could not be)
 * and every operation are on the allow-list. The output format when `format` is absent is the input's own (JPEG,
 * PNG or WebP here), which is allowed.
 */
export function runsInProcess(input: InputStructure | undefined, ops: Operations): boolean {
  if (input === undefined || !boundedInput(input)) return false;
  const large = input.width * input.height > IN_PROCESS_MAX_PIXELS;
  if (large && !STREAMED_OUTPUTS.has(ops.format ?? input.format)) return false;
  return operationsRunInProcess(ops);
}
