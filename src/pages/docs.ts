// GET /docs: the site's header and the list of guides (docs/*.md, each a page under /docs/<guide>), then the API
// reference: the shell of Swagger UI (its files under /docs/assets/, served from node_modules; docs.js starts it).
import { guideList, type Guide } from './guides.ts';
import { siteHeader } from './layout.ts';

export function renderDocsPage(guides: readonly Guide[]): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>imgpipe API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
    <link rel="stylesheet" href="/assets/site.css" />
  </head>
  <body>
    ${siteHeader('/docs')}
    <section class="guides panel docs-guides" aria-label="Guides">
      <h2>Guides</h2>
      ${guideList(guides)}
    </section>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/docs.js"></script>
  </body>
</html>
`;
}
