// Renders /openapi.json with Swagger UI; every asset comes from this instance, so /docs works offline.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // No calls to validator.swagger.io: the page must not reach outside this instance.
  validatorUrl: null,
  tryItOutEnabled: false,
});
