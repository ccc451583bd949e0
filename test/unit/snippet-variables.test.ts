// Every snippet a reader copies (the READMEs, docs/, examples/) names the same things the same way: the API key
// IMGPIPE_KEY, the server IMGPIPE_URL, so that one `export` serves every page they copy from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The snippets' variables: the key, the server, the delivery account and secret, and Next's public copies. */
const NAMES = new Set([
  'IMGPIPE_KEY',
  'IMGPIPE_URL',
  'IMGPIPE_ACCOUNT',
  'IMGPIPE_DELIVERY_SECRET',
  'NEXT_PUBLIC_IMGPIPE_URL',
  'NEXT_PUBLIC_IMGPIPE_ACCOUNT',
]);

function filesIn(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesIn(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Each snippet: the fenced code blocks of the Markdown files, and every example file whole. */
function snippets(): { where: string; code: string }[] {
  const markdown = ['README.md', 'clients/js/README.md', ...filesIn('docs').filter((f) => f.endsWith('.md'))];
  const blocks = markdown.flatMap((file) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^```\w*\n([\s\S]*?)^```/gm)].map((m) => ({
      where: file,
      code: m[1]!,
    })),
  );
  const examples = filesIn('examples').map((file) => ({
    where: relative(ROOT, join(ROOT, file)),
    code: readFileSync(join(ROOT, file), 'utf8'),
  }));
  return [...blocks, ...examples];
}

test('snippets send the API key from IMGPIPE_KEY and reach the server by IMGPIPE_URL', () => {
  const wrong: string[] = [];
  for (const { where, code } of snippets()) {
    // Other services' tokens (a CDN's purge API) are theirs: an imgpipe key is any name with KEY or IMGPIPE in it.
    for (const [, name] of code.matchAll(/Bearer \$\{?(\w+)/g)) {
      if (/KEY|IMGPIPE/.test(name!) && name !== 'IMGPIPE_KEY') wrong.push(`${where}: Bearer $${name}`);
    }
    for (const [, name] of code.matchAll(/apiKey: process\.env\.(\w+)/g)) {
      if (name !== 'IMGPIPE_KEY') wrong.push(`${where}: apiKey ${name}`);
    }
    for (const [, name] of code.matchAll(/base(?:Url|URL): process\.env\.(\w+)/g)) {
      if (name !== 'IMGPIPE_URL') wrong.push(`${where}: base URL ${name}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("snippets read only imgpipe's variable names", () => {
  const unknown = new Set<string>();
  for (const { where, code } of snippets()) {
    const read = [
      ...code.matchAll(/process\.env\.(\w+)/g),
      ...code.matchAll(/environ\[["'](\w+)["']\]/g),
      ...code.matchAll(/\$\{?(\w*IMGPIPE\w*)/g),
    ];
    for (const [, name] of read) {
      if (name!.includes('IMGPIPE') && !NAMES.has(name!)) unknown.add(`${where}: ${name}`);
    }
  }
  assert.deepEqual([...unknown], []);
});
