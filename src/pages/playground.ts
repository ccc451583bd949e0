// GET /: the playground, in the site's header and cards (/assets/site.css) with a stylesheet of its own and scripts
// (/playground.css, /playground.js, /playground-delivery.js from src/http/static) under the playground's CSP. The form has a
// control for every field the registry's URL options carry, in their order, each naming its JSON path (data-path):
// a hand-made one where a field has a form of its own, else a text field; the URL options ride along as JSON, so
// "Copy as delivery URL" writes exactly the operations the form sends.
import { AUTO_FORMAT_CANDIDATES, OUTPUT_FORMATS } from '../pipeline/formats.ts';
import type { UrlOption } from '../pipeline/operations/entry.ts';
import { OPERATIONS, URL_OPTIONS, type OperationKey } from '../pipeline/registry.ts';
import { escapeHtml, siteHeader } from './layout.ts';

/** The registry's delivery URL options for the page's script (a data block: not executed, so no CSP question). */
const URL_OPTIONS_JSON = JSON.stringify(URL_OPTIONS).replace(/</g, '\\u003c');

/** The output formats (formats.ts) as the format choice's options and the `formats` checkboxes (auto's checked). */
const FORMAT_OPTIONS = OUTPUT_FORMATS.map((f) => `<option value="${f}">${f}</option>`).join(
  '\n              ',
);
const FORMAT_BOXES = OUTPUT_FORMATS.map(
  (f) =>
    `<label><input type="checkbox" value="${f}"${AUTO_FORMAT_CANDIDATES.includes(f) ? ' checked' : ''} /> ${f}</label>`,
).join('\n            ');

/**
 * The hand-made control of each URL option's field, by its JSON path (`data-path`): a field without one gets a text
 * field (genericControl), so an operation added to the registry is in the form from its entry alone.
 */
const CONTROLS: Readonly<Record<string, string>> = {
  trim: `          <label
            ><input id="trim" data-path="trim" type="checkbox" /> trim borders, threshold
            <input id="trim-threshold" type="number" min="0" max="255" step="1" value="10"
          /></label>`,
  crop: `          <span id="crop" data-path="crop"
            >crop x <input id="crop-x" type="number" min="0" step="1" placeholder="none" /> y
            <input id="crop-y" type="number" min="0" step="1" placeholder="0" /> w
            <input id="crop-w" type="number" min="1" step="1" placeholder="none" /> h
            <input id="crop-h" type="number" min="1" step="1" placeholder="none"
          /></span>`,
  rotate: `          <label
            >rotate <input id="rotate" data-path="rotate" type="number" min="-359" max="359" step="1" placeholder="0"
          /></label>`,
  flip: `          <label>
            flip
            <select id="flip" data-path="flip">
              <option value="" selected>none</option>
              <option value="horizontal">horizontal</option>
              <option value="vertical">vertical</option>
              <option value="both">both</option>
            </select>
          </label>`,
  'resize.w': `          <label>w <input id="w" data-path="resize.w" type="number" min="1" step="1" placeholder="none" /></label>`,
  'resize.h': `          <label>h <input id="h" data-path="resize.h" type="number" min="1" step="1" placeholder="none" /></label>`,
  'resize.fit': `          <label>
            fit
            <select id="fit" data-path="resize.fit">
              <option value="inside" selected>inside</option>
              <option value="outside">outside</option>
              <option value="cover">cover</option>
              <option value="contain">contain</option>
              <option value="fill">fill</option>
            </select>
          </label>`,
  'resize.position': `          <label>
            position
            <select
              id="position"
              data-path="resize.position"
              title="cover: the part the crop keeps; contain: where the image sits in the box"
            >
              <option value="" selected>center</option>
              <option value="attention">attention</option>
              <option value="entropy">entropy</option>
              <option value="point">a point</option>
            </select>
          </label>
          <label id="point" hidden
            >x <input id="position-x" type="number" min="0" max="1" step="0.05" value="0.5" /> y
            <input id="position-y" type="number" min="0" max="1" step="0.05" value="0.5"
          /></label>`,
  'resize.dpr': `          <label>dpr <input id="dpr" data-path="resize.dpr" type="number" min="1" max="4" step="any" placeholder="1" /></label>`,
  pad: `          <label>pad <input id="pad" data-path="pad" type="number" min="0" step="1" placeholder="0" /></label>`,
  background: `          <label
            >background
            <input id="background" data-path="background" type="text" spellcheck="false" size="9" placeholder="#ffffff"
          /></label>`,
  grayscale: `          <label><input id="grayscale" data-path="grayscale" type="checkbox" /> grayscale</label>`,
  'modulate.brightness': `          <label
            >brightness
            <input id="brightness" data-path="modulate.brightness" type="number" min="0" max="10" step="any" placeholder="1"
          /></label>`,
  'modulate.saturation': `          <label
            >saturation
            <input id="saturation" data-path="modulate.saturation" type="number" min="0" max="10" step="any" placeholder="1"
          /></label>`,
  'modulate.hue': `          <label
            >hue <input id="hue" data-path="modulate.hue" type="number" min="-360" max="360" step="1" placeholder="0"
          /></label>`,
  blur: `          <label
            >blur <input id="blur" data-path="blur" type="number" min="0.3" max="1000" step="any" placeholder="none"
          /></label>`,
  sharpen: `          <label
            >sharpen
            <input id="sharpen" data-path="sharpen" type="text" spellcheck="false" size="6" placeholder="none, true, 0.5–10"
          /></label>`,
  'overlay.name': `          <label
            >name
            <input
              id="overlay-name"
              data-path="overlay.name"
              type="text"
              placeholder="stored on /account"
              pattern="(?:[a-z0-9]|-){1,40}"
              size="14"
          /></label>`,
  'overlay.gravity': `          <label>
            at
            <select id="overlay-gravity" data-path="overlay.gravity">
              <option value="" selected>southeast</option>
              <option value="south">south</option>
              <option value="southwest">southwest</option>
              <option value="west">west</option>
              <option value="northwest">northwest</option>
              <option value="north">north</option>
              <option value="northeast">northeast</option>
              <option value="east">east</option>
              <option value="center">center</option>
            </select>
          </label>`,
  'overlay.opacity': `          <label
            >opacity
            <input id="overlay-opacity" data-path="overlay.opacity" type="number" min="0" max="1" step="any" placeholder="1"
          /></label>`,
  'overlay.width': `          <label
            >width share
            <input id="overlay-width" data-path="overlay.width" type="number" min="0.01" max="1" step="any" placeholder="own size"
          /></label>`,
  'overlay.margin': `          <label
            >margin <input id="overlay-margin" data-path="overlay.margin" type="number" min="0" step="1" placeholder="0"
          /></label>`,
  format: `          <label>
            format
            <select id="format" data-path="format">
              <option value="" selected>same as input</option>
              ${FORMAT_OPTIONS}
              <option value="auto">auto (the smallest)</option>
            </select>
          </label>`,
  formats: `          <span id="formats" data-path="formats" hidden
            >of
            ${FORMAT_BOXES}
          </span>`,
  quality: `          <label>
            quality
            <select id="quality-mode" data-path="quality">
              <option value="" selected>number</option>
              <option value="auto">auto (SSIMULACRA 2 82)</option>
              <option value="auto:high">auto:high (87)</option>
              <option value="auto:eco">auto:eco (72)</option>
            </select>
          </label>
          <label
            ><input
              id="quality"
              type="number"
              min="1"
              max="100"
              step="1"
              value="80"
              aria-label="quality number"
            />
            <small id="quality-note" hidden>PNG is lossless</small></label
          >`,
  max_bytes: `          <label
            >max&nbsp;bytes
            <input
              id="max-bytes"
              data-path="max_bytes"
              type="text"
              inputmode="numeric"
              spellcheck="false"
              placeholder="none, or input"
              size="9"
          /></label>`,
  placeholder: `          <label
            ><input id="placeholder" data-path="placeholder" type="checkbox" /> placeholder (ThumbHash and colour)</label
          >`,
  strip: `          <label><input id="strip" data-path="strip" type="checkbox" checked /> strip metadata</label>`,
};

/** The form's fieldsets: each legend and the first field it holds; the fields after it join it until the next. */
const FIELDSETS: readonly (readonly [legend: string, firstPath: string])[] = [
  ['cut and turn', 'trim'],
  ['resize', 'resize.w'],
  ['pad and tone', 'pad'],
  ['overlay', 'overlay.name'],
  ['output', 'format'],
];

/** A text field for an option: its digits are sent as a number, other text as it is (playground.js, controlValue). */
function genericControl(option: UrlOption): string {
  const path = option.path.join('.');
  const description =
    OPERATIONS[option.path[0] as OperationKey].schema({ maxDimension: 1 }).description ?? '';
  return `          <label title="${escapeHtml(description)}"
            >${escapeHtml(option.name)}
            <input id="${path.replace(/[._]/g, '-')}" data-path="${path}" type="text" spellcheck="false" size="9" placeholder="none"
          /></label>`;
}

/** The form's fieldsets, every URL option's field in the registry's order. */
function formFieldsets(): string {
  let html = '';
  for (const option of URL_OPTIONS) {
    const path = option.path.join('.');
    const legend = FIELDSETS.find(([, first]) => first === path)?.[0];
    if (legend !== undefined)
      html += `${html ? '        </fieldset>\n' : ''}        <fieldset>\n          <legend>${legend}</legend>\n`;
    html += `${CONTROLS[path] ?? genericControl(option)}\n`;
  }
  return `${html}        </fieldset>\n`;
}

export const PLAYGROUND_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>imgpipe playground</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="stylesheet" href="/assets/site.css" />
    <link rel="stylesheet" href="/playground.css" />
  </head>
  <body>
    ${siteHeader('/')}
    <main class="playground">
      <h1>Playground</h1>
      <p>
        Try <code>POST /v1/image</code> with your key. No key yet? <a href="/pricing">Get one free</a>. API
        reference: <a href="/docs">/docs</a> · <a href="/openapi.json">/openapi.json</a>
      </p>
      <form id="form" class="panel">
        <label class="wide"
          >API key
          <input id="key" type="password" autocomplete="off" spellcheck="false" placeholder="imgp_…" required
        /></label>
        <div id="drop" class="wide" tabindex="0">
          <span id="drop-label">Drop an image here, or</span>
          <input id="file" type="file" accept="image/*" />
        </div>
        <label class="wide"
          >or let the server fetch an image by URL
          <input
            id="url"
            type="url"
            inputmode="url"
            spellcheck="false"
            placeholder="https://example.com/photo.jpg"
        /></label>
${formFieldsets()}        <button id="run" type="submit">Process</button>
      </form>
      <p id="error" role="alert" hidden></p>
      <section id="panels">
        <figure>
          <figcaption>Original <span id="original-info"></span></figcaption>
          <img id="original-img" alt="original" hidden />
        </figure>
        <figure>
          <figcaption>Result <span id="result-info"></span></figcaption>
          <p id="saving" hidden></p>
          <p id="max-bytes-missed" class="warning" role="status" hidden></p>
          <a id="download" class="button" download="result" hidden>Download</a>
          <img id="result-img" alt="result" hidden />
        </figure>
        <figure id="placeholder-panel" hidden>
          <figcaption>
            Placeholder <span>from X-Service-Placeholder; dominant colour</span>
            <span id="placeholder-swatch" class="swatch"></span> <span id="placeholder-color"></span>
          </figcaption>
          <img id="placeholder-img" alt="the placeholder decoded from the ThumbHash header" />
        </figure>
      </section>
      <section class="panel">
        <h2>Response headers <span id="quota"></span></h2>
        <table id="headers">
          <tbody></tbody>
        </table>
      </section>
      <section class="panel">
        <h2>The same request with curl <button id="copy-curl" type="button">Copy (with your key)</button></h2>
        <pre><code id="curl"></code></pre>
      </section>
      <section id="delivery" class="panel">
        <h2>As a delivery URL, for <code>&lt;img src&gt;</code></h2>
        <p>
          The operations above, every one of them, as URL options (format auto becomes <code>f:auto</code> with its
          <code>formats:</code>, chosen among those the browser takes), signed for an image on the web. Sign on your server in production: the secret is
          used only in this tab here and never sent. Get one on <a href="/account">/account</a>.
        </p>
        <label class="wide"
          >Image URL <input id="delivery-source" type="url" placeholder="https://example.com/photo.jpg"
        /></label>
        <label class="wide"
          >Delivery secret
          <input
            id="delivery-secret"
            type="password"
            autocomplete="off"
            spellcheck="false"
            placeholder="imgpd_…"
        /></label>
        <button id="copy-delivery" type="button">Copy as delivery URL</button>
        <p id="delivery-error" role="alert" hidden></p>
        <pre><code id="delivery-url"></code></pre>
        <img id="delivery-img" alt="the image at the delivery URL" hidden />
      </section>
    </main>
    <script type="application/json" id="url-options">
      ${URL_OPTIONS_JSON}
    </script>
    <script src="/playground.js" type="module"></script>
    <script src="/playground-delivery.js" type="module"></script>
  </body>
</html>
`;
