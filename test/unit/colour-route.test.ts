// The colour table of docs/colour.md says what colourRoute decides, cell by cell (src/pipeline/colour.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { colourRoute, type ColourTarget, type InputColour } from '../../src/pipeline/colour.ts';
import { tableAfter } from '../helpers/markdown.ts';

const guide = readFileSync(new URL('../../docs/colour.md', import.meta.url), 'utf8');

/** The inputs each row of the table stands for. */
const ROW_INPUTS: Record<string, InputColour[]> = {
  'CMYK (JPEG or TIFF)': [
    { space: 'cmyk', hasProfile: true },
    { space: 'cmyk', hasProfile: false },
  ],
  'grey with an ICC profile': [
    { space: 'b-w', hasProfile: true },
    { space: 'grey16', hasProfile: true },
  ],
  'grey without a profile': [
    { space: 'b-w', hasProfile: false },
    { space: 'grey16', hasProfile: false },
  ],
  '16-bit RGB (PNG, TIFF)': [
    { space: 'rgb16', hasProfile: true },
    { space: 'rgb16', hasProfile: false },
  ],
  'anything else (8-bit RGB, etc.)': [
    { space: 'srgb', hasProfile: true },
    { space: 'srgb', hasProfile: false },
  ],
};
const COLUMN_TARGETS: ColourTarget[][] = [['jpeg'], ['png'], ['webp', 'avif']];

test("docs/colour.md: the colour table says, for each input and output, colourRoute's space, depth and profile", () => {
  const rows = tableAfter(guide, '## Each input in each output format');
  assert.deepEqual(
    rows.map((r) => r[0]),
    Object.keys(ROW_INPUTS),
  );
  for (const [input, ...cells] of rows) {
    cells.forEach((cell, column) => {
      for (const colour of ROW_INPUTS[input!]!) {
        for (const target of COLUMN_TARGETS[column]!) {
          const route = colourRoute(colour, target, {});
          const what = `${input} → ${target} (${colour.space}): "${cell}"`;
          assert.equal(cell.includes('tagged sRGB'), route.profile === 'srgb', what);
          assert.equal(/\bgrey\b/.test(cell), route.space === 'b-w' || route.space === 'grey16', what);
          if (colour.space.endsWith('16')) {
            assert.equal(cell.includes('16-bit'), route.space.endsWith('16'), what);
          }
        }
      }
    });
  }
});

test('colourRoute: an overlay or a background that is not grey makes a grey input sRGB in every format', () => {
  const grey = { space: 'b-w', hasProfile: true };
  for (const target of ['jpeg', 'png', 'intermediate'] as const) {
    assert.deepEqual(colourRoute(grey, target, { background: '#808080' }), {
      space: 'b-w',
      profile: 'input',
    });
    for (const ops of [{ background: '#ff0000' }, { overlay: { name: 'logo' } }]) {
      assert.deepEqual(colourRoute(grey, target, ops), { space: 'srgb', profile: 'srgb' }, target);
    }
  }
});
