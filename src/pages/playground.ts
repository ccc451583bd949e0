// GET /: the playground, a page of its own (no site layout): its stylesheet and scripts are /playground.css,
// /playground.js and /playground-delivery.js from src/http/static, under the playground's own CSP. Each form control
// of an operation names its JSON path (data-path); the delivery URL options of the registry ride along as JSON, so
// "Copy as delivery URL" writes exactly the operations the form sends.
import { AUTO_FORMAT_CANDIDATES, OUTPUT_FORMATS } from '../pipeline/formats.ts';
import { URL_OPTIONS } from '../pipeline/registry.ts';

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

export const PLAYGROUND_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>imgpipe playground</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="stylesheet" href="/playground.css" />
  </head>
  <body>
    <header>
      <nav><a href="/pricing">Pricing</a><a href="/account">Account</a><a href="/docs">Docs</a></nav>
      <h1>imgpipe playground</h1>
      <p>
        Try <code>POST /v1/image</code> with your key. No key yet? <a href="/pricing">Get one free</a>. API
        reference: <a href="/docs">/docs</a> · <a href="/openapi.json">/openapi.json</a>
      </p>
    </header>
    <main>
      <form id="form">
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
        <fieldset>
          <legend>cut and turn</legend>
          <label
            ><input id="trim" data-path="trim" type="checkbox" /> trim borders, threshold
            <input id="trim-threshold" type="number" min="0" max="255" step="1" value="10"
          /></label>
          <span id="crop" data-path="crop"
            >crop x <input id="crop-x" type="number" min="0" step="1" placeholder="none" /> y
            <input id="crop-y" type="number" min="0" step="1" placeholder="0" /> w
            <input id="crop-w" type="number" min="1" step="1" placeholder="none" /> h
            <input id="crop-h" type="number" min="1" step="1" placeholder="none"
          /></span>
          <label
            >rotate <input id="rotate" data-path="rotate" type="number" min="-359" max="359" step="1" placeholder="0"
          /></label>
          <label>
            flip
            <select id="flip" data-path="flip">
              <option value="" selected>none</option>
              <option value="horizontal">horizontal</option>
              <option value="vertical">vertical</option>
              <option value="both">both</option>
            </select>
          </label>
        </fieldset>
        <fieldset>
          <legend>resize</legend>
          <label>w <input id="w" data-path="resize.w" type="number" min="1" step="1" placeholder="none" /></label>
          <label>h <input id="h" data-path="resize.h" type="number" min="1" step="1" placeholder="none" /></label>
          <label>
            fit
            <select id="fit" data-path="resize.fit">
              <option value="inside" selected>inside</option>
              <option value="outside">outside</option>
              <option value="cover">cover</option>
              <option value="contain">contain</option>
              <option value="fill">fill</option>
            </select>
          </label>
          <label>
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
          /></label>
          <label>dpr <input id="dpr" data-path="resize.dpr" type="number" min="1" max="4" step="any" placeholder="1" /></label>
        </fieldset>
        <fieldset>
          <legend>pad and tone</legend>
          <label>pad <input id="pad" data-path="pad" type="number" min="0" step="1" placeholder="0" /></label>
          <label
            >background
            <input id="background" data-path="background" type="text" spellcheck="false" size="9" placeholder="#ffffff"
          /></label>
          <label><input id="grayscale" data-path="grayscale" type="checkbox" /> grayscale</label>
          <label
            >brightness
            <input id="brightness" data-path="modulate.brightness" type="number" min="0" max="10" step="any" placeholder="1"
          /></label>
          <label
            >saturation
            <input id="saturation" data-path="modulate.saturation" type="number" min="0" max="10" step="any" placeholder="1"
          /></label>
          <label
            >hue <input id="hue" data-path="modulate.hue" type="number" min="-360" max="360" step="1" placeholder="0"
          /></label>
          <label
            >blur <input id="blur" data-path="blur" type="number" min="0.3" max="1000" step="any" placeholder="none"
          /></label>
          <label
            >sharpen
            <input id="sharpen" data-path="sharpen" type="text" spellcheck="false" size="6" placeholder="none, true, 0.5–10"
          /></label>
        </fieldset>
        <fieldset>
          <legend>overlay</legend>
          <label
            >name
            <input
              id="overlay-name"
              data-path="overlay.name"
              type="text"
              placeholder="stored on /account"
              pattern="(?:[a-z0-9]|-){1,40}"
              size="14"
          /></label>
          <label>
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
          </label>
          <label
            >opacity
            <input id="overlay-opacity" data-path="overlay.opacity" type="number" min="0" max="1" step="any" placeholder="1"
          /></label>
          <label
            >width share
            <input id="overlay-width" data-path="overlay.width" type="number" min="0.01" max="1" step="any" placeholder="own size"
          /></label>
          <label
            >margin <input id="overlay-margin" data-path="overlay.margin" type="number" min="0" step="1" placeholder="0"
          /></label>
        </fieldset>
        <fieldset>
          <legend>output</legend>
          <label>
            format
            <select id="format" data-path="format">
              <option value="" selected>same as input</option>
              ${FORMAT_OPTIONS}
              <option value="auto">auto (the smallest)</option>
            </select>
          </label>
          <span id="formats" data-path="formats" hidden
            >of
            ${FORMAT_BOXES}
          </span>
          <label>
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
          >
          <label
            >max&nbsp;bytes
            <input
              id="max-bytes"
              data-path="max_bytes"
              type="text"
              inputmode="numeric"
              spellcheck="false"
              placeholder="none, or input"
              size="9"
          /></label>
          <label
            ><input id="placeholder" data-path="placeholder" type="checkbox" /> placeholder (ThumbHash and colour)</label
          >
          <label><input id="strip" data-path="strip" type="checkbox" checked /> strip metadata</label>
        </fieldset>
        <button id="run" type="submit">Process</button>
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
      <section>
        <h2>Response headers <span id="quota"></span></h2>
        <table id="headers">
          <tbody></tbody>
        </table>
      </section>
      <section>
        <h2>The same request with curl <button id="copy-curl" type="button">Copy (with your key)</button></h2>
        <pre><code id="curl"></code></pre>
      </section>
      <section id="delivery">
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
