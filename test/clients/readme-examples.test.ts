// The README's one example per operation runs as written (with the test server's address) and answers an image, so
// the front door's examples cannot rot; test/unit/readme.test.ts checks that each says the same as its URL options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startTestServer } from '../helpers/app.ts';
import { operationExamples } from '../helpers/markdown.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

test('README: each example of an operation answers 200 with an image, run as written against a server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-readme-'));
  const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#b85' } })
    .jpeg()
    .toBuffer();
  writeFileSync(join(dir, 'photo.jpg'), photo);
  const server = await startTestServer(t);
  const logo = await sharp({ create: { width: 120, height: 40, channels: 4, background: '#fff8' } })
    .png()
    .toBuffer();
  writeFileSync(join(dir, 'logo.png'), logo);
  const { block, examples } = operationExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const local = block.replaceAll('http://127.0.0.1:3000', server.url);
  const lines = local.split('\n');
  const definition = lines.slice(0, lines.indexOf('}') + 1).join('\n');
  const bash = (script: string) =>
    run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      env: { ...process.env, IMGPIPE_KEY: server.key },
    });
  // The block's other commands (the overlay upload) first, then each example on its own.
  await bash(lines.filter((line) => !line.startsWith("op '")).join('\n'));
  for (const { what, line } of examples) {
    await t.test(line, async () => {
      await bash(`${definition}\n${line.replaceAll('http://127.0.0.1:3000', server.url)}`);
      const output = join(dir, line.split(' ').at(-1)!);
      const meta = await sharp(output).metadata();
      assert.ok(meta.width && meta.height, `${what}: ${output} is an image`);
    });
  }
});
