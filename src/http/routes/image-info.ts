// POST /v1/image/info: auth → the key's per-minute limit → read input (any image form) → header-only probe → JSON.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { checkInfoRate } from '../../accounts/rate-limit.ts';
import type { AppContext } from '../../context.ts';
import { DECODED_FORMATS, OUTPUT_FORMATS } from '../../pipeline/formats.ts';
import { checkDecodeLimits, predictOutput, probeImage } from '../../pipeline/probe.ts';
import { inJobSlot } from '../../job/run.ts';
import { readSource } from '../../sources/index.ts';
import { uploadSource } from '../../sources/upload.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { acceptImageForms, imageBodies, imageFormRoute } from '../image-forms.ts';
import { readImageProbeRequest } from '../image-request.ts';
import { resolvePreset } from '../../presets/index.ts';
import { BEARER, errorAnswers, success } from '../openapi.ts';
import { URL_SOURCE_ERRORS } from '../../fetch/errors.ts';

const infoResponseSchema = z.object({
  format: z.enum(DECODED_FORMATS).describe('The input format, from its bytes.'),
  width: z.number().int().describe('Upright width (after the EXIF orientation), one frame.'),
  height: z.number().int().describe('Upright height (after the EXIF orientation), one frame.'),
  orientation: z.number().int().describe('EXIF orientation 1–8 (1 when absent).'),
  hasAlpha: z.boolean(),
  frames: z.number().int().describe('Frames in the file (more than 1: an animated GIF or WebP).'),
  iccProfile: z.string().nullable().describe("The ICC profile's description; null without a profile."),
  bytes: z.number().int().describe('Size of the input in bytes.'),
  metadata: z
    .object({ exif: z.boolean(), xmp: z.boolean(), iptc: z.boolean(), icc: z.boolean() })
    .describe('Which metadata blocks the input holds.'),
  withinLimits: z
    .boolean()
    .describe(
      'False when POST /v1/image would refuse it for its pixels (MAX_INPUT_PIXELS over every frame kept); more frames than MAX_ANIMATION_FRAMES is 413 here too.',
    ),
  output: z
    .object({
      format: z
        .enum(OUTPUT_FORMATS)
        .nullable()
        .describe(
          'null with format "auto" over several candidates: the smallest is only known by encoding (an animation kept as WebP has one)',
        ),
      width: z.number().int(),
      height: z.number().int(),
      frames: z
        .number()
        .int()
        .describe('Frames written: every input frame of an animation kept as WebP, else 1.'),
      exact: z
        .literal(false)
        .optional()
        .describe(
          'Present (false) with trim: the borders it cuts are only known from the pixels, so width and height are the untrimmed size, an upper bound.',
        ),
    })
    .optional()
    .describe('With operations: what POST /v1/image would write (computed, no pixel processed).'),
});

/** The route's schema; `operations` is the server's operations schema (with its MAX_RESIZE_DIMENSION). */
const imageInfoSchema = (operations: AppContext['operations']) => ({
  operationId: 'imageInfo',
  tags: ['Images'],
  summary: "Probe an image's header: format, size, orientation, frames, profile; counts no quota",
  description: `Takes the same forms as POST /v1/image (multipart \`image\`, a \`url\`, or the raw body) with the same key,
reads only the image's header and answers JSON. With \`operations\` (optional here) it also answers the output's format,
size and frames that POST /v1/image would produce, without processing a pixel. Counts nothing against the quota; limited
to INFO_RATE_LIMIT calls per minute per key (429 rate_limited with Retry-After). A url is fetched under every rule of
POST /v1/image (SSRF guard, redirects, size and time limits); as a probe counts no unit, all probes together hold at
most half of the URL fetch slots (503 fetch_busy beyond). With operations, an image POST /v1/image would refuse for
its pixels or frames is 413 image_too_large here too. The header is read in a processing slot, like a job's
(503 busy beyond MAX_CONCURRENT_JOBS).`,
  security: BEARER,
  body: imageBodies(operations, false),
  querystring: z.object({
    operations: z.string().optional().describe('The operations JSON, URL-encoded, for the raw-body form.'),
  }),
  response: {
    ...success(200, "The image's header facts.", infoResponseSchema),
    ...errorAnswers(
      [
        'invalid_operations',
        'no_image',
        'bad_upload',
        ...URL_SOURCE_ERRORS,
        'image_too_large',
        'unprocessable_image',
        'rate_limited',
        'busy',
        'store_unavailable',
      ],
      { auth: true },
    ),
  },
});

export async function imageInfoRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const { config } = ctx;
  app.post(
    '/v1/image/info',
    imageFormRoute(requireApiKey(ctx), imageInfoSchema(ctx.operations)),
    async (request) => {
      const { accountId } = accountOf(request);
      await checkInfoRate(ctx.store.db, accountId, config.infoRateLimit);
      const { source, operations } = await readImageProbeRequest(request, {
        schema: ctx.operations,
        maxUploadBytes: uploadSource.maxBytes(config),
        resolvePreset: (value) => resolvePreset(ctx.store.db, accountId, value),
      });
      // A probe counts no unit, so it may take only part of the fetch slots: paid work always finds one.
      const input = await readSource(ctx, source, { account: accountId, free: true });
      const facts = await probeImage(input, config, (work) => inJobSlot(ctx.jobs, accountId, 'probe', work));
      // The limits of POST /v1/image with these operations (or the defaults): what its decoder would read.
      const output = predictOutput(facts, operations ?? {});
      let fits = true;
      try {
        checkDecodeLimits(facts, output.frames, config);
      } catch (err) {
        if (operations) throw err;
        fits = false;
      }
      return operations ? { ...facts, withinLimits: fits, output } : { ...facts, withinLimits: fits };
    },
  );
  acceptImageForms(app);
}
