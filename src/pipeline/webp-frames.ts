// owns: an animated WebP output's frames as the input had them. libwebp's animation encoder merges a frame into the
// one before when it changes nothing (identical, or within its lossy tolerance), adding its delay; a job writes
// every input frame, so such a frame is put back as a frame that draws nothing, with its own delay.
import sharp from 'sharp';

interface Chunk {
  id: string;
  /** The payload, without the 8-byte chunk header. */
  data: Buffer;
}

/** The chunks of a RIFF container from `at` to `end`, or undefined when one runs past the end. */
function readChunks(file: Buffer, at: number, end: number): Chunk[] | undefined {
  const chunks: Chunk[] = [];
  while (at + 8 <= end) {
    const length = file.readUInt32LE(at + 4);
    if (at + 8 + length > end) return undefined;
    chunks.push({ id: file.toString('latin1', at, at + 4), data: file.subarray(at + 8, at + 8 + length) });
    at += 8 + length + (length & 1);
  }
  return chunks;
}

function chunkBytes({ id, data }: Chunk): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat(data.length & 1 ? [head, data, Buffer.alloc(1)] : [head, data]);
}

// ANMF's payload: X/2, Y/2, width-1, height-1 and duration in 24 bits each, then the flags byte (bit 1: do not
// blend, bit 0: dispose to background), then the frame's own chunks.
const DURATION_AT = 12;
const FLAGS_AT = 15;
const FRAME_DATA_AT = 16;
const DISPOSE_TO_BACKGROUND = 0x01;

/** How the output's merged frames split back into the input's delays, or undefined when they do not add up. */
function splitDelays(written: number[], delays: readonly number[]): number[][] | undefined {
  const groups: number[][] = [];
  let next = 0;
  for (const duration of written) {
    const group: number[] = [];
    let sum = 0;
    while (sum < duration && next < delays.length) {
      sum += delays[next]!;
      group.push(delays[next++]!);
    }
    if (sum !== duration || group.length === 0) return undefined;
    groups.push(group);
  }
  return next === delays.length ? groups : undefined;
}

/**
 * The animated WebP `webp` with one frame per input delay: each frame libwebp merged into the one before becomes a
 * fully transparent frame over the same rectangle, alpha-blended (so the canvas does not change), shown for its own
 * delay; the merged frame's disposal moves to the last of its group. Unchanged when nothing was merged or when the
 * written delays are not sums of consecutive input delays. `seconds`: the job's deadline for sharp. Answers the file
 * and its frames.
 */
export async function restoreMergedFrames(
  webp: Buffer,
  delays: readonly number[],
  seconds: number,
): Promise<{ data: Buffer; frames: number }> {
  const chunks =
    webp.toString('latin1', 0, 4) === 'RIFF' && webp.toString('latin1', 8, 12) === 'WEBP'
      ? readChunks(webp, 12, webp.length)
      : undefined;
  const frames = chunks?.filter((c) => c.id === 'ANMF') ?? [];
  const unchanged = { data: webp, frames: Math.max(1, frames.length) };
  if (!chunks || frames.length === 0 || frames.length >= delays.length) return unchanged;
  const groups = splitDelays(
    frames.map((f) => f.data.readUIntLE(DURATION_AT, 3)),
    delays,
  );
  if (!groups) return unchanged;
  const blanks = new Map<string, Buffer>();
  const blank = async (width: number, height: number) => {
    const key = `${width}x${height}`;
    let frame = blanks.get(key);
    if (!frame) {
      const file = await sharp({ create: { width, height, channels: 4, background: '#0000' } })
        .timeout({ seconds })
        .webp({ lossless: true })
        .toBuffer();
      frame = Buffer.concat(
        (readChunks(file, 12, file.length) ?? []).filter((c) => c.id === 'VP8L').map(chunkBytes),
      );
      blanks.set(key, frame);
    }
    return frame;
  };
  const out: Buffer[] = [];
  let index = 0;
  for (const chunk of chunks) {
    if (chunk.id !== 'ANMF') {
      out.push(chunkBytes(chunk));
      continue;
    }
    const group = groups[index++]!;
    const head = Buffer.from(chunk.data.subarray(0, FRAME_DATA_AT));
    const dispose = head[FLAGS_AT]! & DISPOSE_TO_BACKGROUND;
    head.writeUIntLE(group[0]!, DURATION_AT, 3);
    if (group.length > 1) head[FLAGS_AT] = head[FLAGS_AT]! & ~DISPOSE_TO_BACKGROUND;
    out.push(chunkBytes({ id: 'ANMF', data: Buffer.concat([head, chunk.data.subarray(FRAME_DATA_AT)]) }));
    const width = head.readUIntLE(6, 3) + 1;
    const height = head.readUIntLE(9, 3) + 1;
    for (let k = 1; k < group.length; k++) {
      const added = Buffer.from(head);
      added.writeUIntLE(group[k]!, DURATION_AT, 3);
      added[FLAGS_AT] = k === group.length - 1 ? dispose : 0;
      out.push(chunkBytes({ id: 'ANMF', data: Buffer.concat([added, await blank(width, height)]) }));
    }
  }
  const body = Buffer.concat(out);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length + 4, 4);
  riff.write('WEBP', 8, 'latin1');
  return { data: Buffer.concat([riff, body]), frames: delays.length };
}
