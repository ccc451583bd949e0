// owns: what an overlay upload (PUT /v1/overlays/{name}) must be: PNG or WebP by its bytes, one frame and at most
// MAX_OVERLAY_PIXELS by its structure (before libvips), decodable to the end.
import sharp, { type Metadata } from 'sharp';
import { apiError } from '../errors.ts';
import { sniffImageFormat } from './formats.ts';
import { readInputStructure } from './input-header.ts';
import type { InSlot } from './probe.ts';
import { MAX_OVERLAY_PIXELS } from './overlay.ts';

export interface OverlayImageInfo {
  format: 'png' | 'webp';
  width: number;
  height: number;
}

/**
 * Checks an upload is an overlay this server keeps: PNG or WebP by its bytes (whatever the Content-Type said), one
 * frame and at most MAX_OVERLAY_PIXELS by its structure, walked as a job's is before any libvips call (an animated
 * overlay is refused: only its first frame could be placed), then decodable to the end in a job slot (`inSlot`).
 */
export async function inspectOverlayImage(
  image: Buffer,
  timeoutSeconds: number,
  inSlot: InSlot,
): Promise<OverlayImageInfo> {
  const format = sniffImageFormat(image);
  if (format !== 'png' && format !== 'webp') {
    throw apiError('unprocessable_image', 'An overlay must be a PNG or WebP image (its bytes say otherwise)');
  }
  // One frame is all an overlay may have: the walk need not count past two.
  const structure = readInputStructure(image, format, 1);
  if (structure === undefined || !structure.readable) {
    throw apiError('unprocessable_image', `The overlay's ${format} structure could not be read`);
  }
  if (structure.frames > 1) {
    throw apiError(
      'unprocessable_image',
      'An overlay must be a still image: this one is animated, and only its first frame could be placed',
    );
  }
  checkOverlayPixels(structure.width, structure.height);
  return inSlot(() => decodeOverlay(image, format, timeoutSeconds));
}

function checkOverlayPixels(width: number, height: number) {
  if (width * height > MAX_OVERLAY_PIXELS) {
    throw apiError(
      'image_too_large',
      `An overlay has at most ${MAX_OVERLAY_PIXELS.toLocaleString('en-US')} pixels (width × height); this one has ${(width * height).toLocaleString('en-US')}`,
    );
  }
}

async function decodeOverlay(
  image: Buffer,
  format: OverlayImageInfo['format'],
  timeoutSeconds: number,
): Promise<OverlayImageInfo> {
  const decoder = sharp(image, { limitInputPixels: false, failOn: 'warning' }).timeout({
    seconds: timeoutSeconds,
  });
  let meta: Metadata;
  try {
    meta = await decoder.metadata();
  } catch (err) {
    throw apiError('unprocessable_image', `The overlay could not be read: ${firstLine(err)}`, { cause: err });
  }
  if (meta.format !== format)
    throw apiError('unprocessable_image', `The file starts like ${format} but is not one`);
  checkOverlayPixels(meta.width, meta.height);
  try {
    await sharp(image, { limitInputPixels: MAX_OVERLAY_PIXELS, failOn: 'warning' })
      .timeout({ seconds: timeoutSeconds })
      .raw()
      .toBuffer();
  } catch (err) {
    throw apiError('unprocessable_image', `The overlay could not be decoded: ${firstLine(err)}`, {
      cause: err,
    });
  }
  return { format, width: meta.width, height: meta.height };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}
