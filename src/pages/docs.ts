// GET /docs: the shell of Swagger UI (its files under /docs/assets/, served from node_modules; docs.js starts it).
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>imgpipe API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" />
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/docs.js"></script>
  </body>
</html>
`;
