// The guides as the instance serves them (/docs/<guide>): every link between them lands on a guide and an anchor it
// has, anchors are GitHub's (so one link works on GitHub and here), and nothing in a file becomes markup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { guideHref, headingSlug, listGuides, renderGuide, type Guide } from '../../src/pages/guides.ts';

const guides = listGuides();
const rendered = new Map(guides.map((g) => [g.name, renderGuide(readFileSync(g.file, 'utf8'), g, guides)]));
const idsOf = (html: string) => new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));

test('guides: the README and every file of docs/ are served, each under its name', () => {
  assert.equal(guides[0]?.file, 'README.md');
  assert.ok(guides.some((g) => g.name === 'delivery' && g.file === 'docs/delivery.md'));
  assert.ok(guides.some((g) => g.name === 'configuration' && g.file === 'docs/configuration.md'));
});

test('guides: every link from one guide to another lands on a guide and on an anchor it has', () => {
  let checked = 0;
  for (const [name, html] of rendered) {
    for (const [, href] of html.matchAll(/<a href="([^"]+)"/g)) {
      const local = /^(?:\/docs\/([^#/]+))?(?:#(.*))?$/.exec(href!);
      if (!local || (!local[1] && !local[2])) continue;
      const target = local[1] ?? name;
      assert.ok(rendered.has(target), `${name} links to ${href}, which is no guide`);
      if (local[2])
        assert.ok(idsOf(rendered.get(target)!).has(local[2]), `${name}: ${href} has no such anchor`);
      checked++;
    }
  }
  assert.ok(checked > 40, `only ${checked} links checked`);
});

test("guides: anchors are GitHub's: lower case, punctuation dropped, spaces as hyphens, repeats numbered", () => {
  assert.equal(headingSlug('3. placeholder'), '3-placeholder');
  assert.equal(headingSlug('Probe an image: POST /v1/image/info'), 'probe-an-image-post-v1imageinfo');
  assert.equal(headingSlug('NODE_ENV fails closed'), 'node_env-fails-closed');
  const html = renderGuide('# A\n\n## Purge\n\n## Purge\n', guides[1]!, guides);
  assert.deepEqual([...idsOf(html)], ['a', 'purge', 'purge-1']);
});

test('guides: a link to a guide becomes /docs/<name>; one to a file the instance does not serve keeps its text', () => {
  const delivery = guides.find((g) => g.name === 'delivery') as Guide;
  const readme = guides[0]!;
  assert.equal(
    guideHref('security.md#delivery-url-signing-secrets', delivery, guides),
    '/docs/security#delivery-url-signing-secrets',
  );
  assert.equal(guideHref('docs/delivery.md', readme, guides), '/docs/delivery');
  assert.equal(
    guideHref('../README.md#starting-the-server', delivery, guides),
    '/docs/readme#starting-the-server',
  );
  assert.equal(guideHref('../BENCHMARKS.md', delivery, guides), null);
  assert.equal(guideHref('https://example.com/a.md', delivery, guides), 'https://example.com/a.md');
  const html = renderGuide('See [the numbers](../BENCHMARKS.md).', delivery, guides);
  assert.equal(html, '<p>See the numbers.</p>\n');
});

test('guides: HTML written in a guide is shown as text, never run or rendered', () => {
  const html = renderGuide(
    '<script>alert(1)</script>\n\nText <b onclick="x()">bold</b>.',
    guides[1]!,
    guides,
  );
  assert.doesNotMatch(html, /<script|<b /);
  assert.match(html, /&lt;script&gt;/);
});
