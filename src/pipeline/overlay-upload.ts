// owns: what an overlay upload (PUT /v1/overlays/{name}) must be: PNG or WebP by its bytes, at most
// MAX_OVERLAY_PIXELS, decodable to the end.
import sharp, { type Metadata } from 'sharp';
import { apiError } from '../errors.ts';
import { sniffImageFormat } from './formats.ts';
import { MAX_OVERLAY_PIXELS } from './overlay.ts';

export interface OverlayImageInfo {
  format: 'png' | 'webp';
  width: number;
  height: number;
}

/**
 * Checks an upload is an overlay this server keeps: PNG or WebP by its bytes (whatever the Content-Type said), at
 * most MAX_OVERLAY_PIXELS, and decodable to the end (first frame).
 */
export async function inspectOverlayImage(image: Buffer, timeoutSeconds: number): Promise<OverlayImageInfo> {
  const format = sniffImageFormat(image);
  if (format !== 'png' && format !== 'webp') {
    throw apiError('unprocessable_image', 'An overlay must be a PNG or WebP image (its bytes say otherwise)');
  }
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
  if (meta.width * meta.height > MAX_OVERLAY_PIXELS) {
    throw apiError(
      'image_too_large',
      `An overlay has at most ${MAX_OVERLAY_PIXELS.toLocaleString('en-US')} pixels (width × height); this one has ${(meta.width * meta.height).toLocaleString('en-US')}`,
    );
  }
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
