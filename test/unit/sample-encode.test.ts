// The quality search's probes: what they encode must decode to the pixels the answer's own encode would hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { AUTO_JPEG_QUANT_TABLE, encodeSample } from '../../src/pipeline/output-search.ts';
import { corpus } from '../helpers/corpus.ts';

async function decoded(jpeg: Buffer): Promise<Buffer> {
  return sharp(jpeg).raw().toBuffer();
}

for (const table of [undefined, AUTO_JPEG_QUANT_TABLE]) {
  test(`a JPEG probe that is read only for its pixels decodes exactly as the answer's encode (table ${table ?? 'default'})`, async () => {
    const { data, info } = await sharp(corpus('Landscape_1.jpg'))
      .resize(256, 256)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { width: info.width, height: info.height, channels: info.channels as 3 };
    for (const quality of [40, 74, 95]) {
      const probe = await encodeSample('jpeg', quality, 3, table, true)(sharp(data, { raw })).toBuffer();
      const answer = await encodeSample('jpeg', quality, 3, table, false)(sharp(data, { raw })).toBuffer();
      assert.ok(
        probe.length > answer.length,
        `q${quality}: the probe skips the optimising pass, so it is larger`,
      );
      assert.ok((await decoded(probe)).equals(await decoded(answer)), `q${quality}: the same pixels`);
    }
  });
}
