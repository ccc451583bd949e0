// owns: the browser code of the playground (GET /); docs.js beside it only starts Swagger UI on /docs.
import { clearPlaceholder, showPlaceholder } from './playground-placeholder.js';
const $ = (id) => document.getElementById(id);
let chosenFile;
let resultUrl;
/** The pending live preview's re-run (schedulePreview). */
let previewTimer;
let originalUrl;

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

/** The output format the form asks for: the chosen one, else what the API makes of the chosen file's type. */
function expectedFormat() {
  if ($('format').value !== '') return $('format').value;
  const type = chosenFile?.type ?? '';
  if (['image/png', 'image/gif', 'image/tiff', 'image/heic', 'image/heif'].includes(type)) return 'png';
  return type.startsWith('image/') ? type.slice('image/'.length) : undefined;
}

/** PNG output is lossless: quality does not apply, so the fields are off (and not sent) then. */
function updateQuality() {
  const lossless = expectedFormat() === 'png';
  $('quality-mode').disabled = lossless;
  // An auto level replaces the number: the server picks it per image.
  $('quality').disabled = lossless || $('quality-mode').value !== '';
  $('quality-note').hidden = !lossless;
}

/** The position the form names: a strategy, or the point of the x and y fields. */
function positionFromForm() {
  if ($('position').value !== 'point') return $('position').value;
  return { x: Number($('position-x').value), y: Number($('position-y').value) };
}

/** The fields read by operationsFromForm's own rules; every other control with a data-path is read by its type. */
const RULED = new Set([
  'trim',
  'crop',
  'rotate',
  'resize.dpr',
  'pad',
  'sharpen',
  'resize.w',
  'resize.h',
  'resize.fit',
  'resize.position',
  'format',
  'formats',
  'quality',
]);

/**
 * A control's JSON value, or undefined when it says nothing: a checkbox when it differs from its default, a number
 * field's number, a text field's digits as a number (other text as it is), a choice other than the first ("").
 */
function controlValue(control) {
  if (control.type === 'checkbox') {
    return control.checked === control.defaultChecked ? undefined : control.checked;
  }
  const text = control.value.trim();
  if (text === '') return undefined;
  if (control.type === 'number' || /^\d+$/.test(text)) return Number(text);
  return text;
}

/**
 * The operations object the form describes; only what the user set, so the API's defaults apply. "Copy as delivery
 * URL" (playground-delivery.js) writes this same object as URL options. A new operation's control needs only its
 * data-path (src/pages/playground.ts).
 */
export function operationsFromForm() {
  const ops = {};
  // trim's threshold, crop's four fields, and the fields whose neutral value is not sent have rules of their own.
  const number = (id) => ($(id).value.trim() === '' ? undefined : Number($(id).value));
  if ($('trim').checked)
    ops.trim = number('trim-threshold') === undefined ? true : { threshold: number('trim-threshold') };
  if (number('crop-w') !== undefined || number('crop-h') !== undefined) {
    ops.crop = {
      x: number('crop-x') ?? 0,
      y: number('crop-y') ?? 0,
      w: number('crop-w'),
      h: number('crop-h'),
    };
  }
  if (number('rotate') !== undefined && number('rotate') !== 0) ops.rotate = number('rotate');
  const w = $('w').value.trim();
  const h = $('h').value.trim();
  if (w !== '' || h !== '') {
    ops.resize = {};
    if (w !== '') ops.resize.w = Number(w);
    if (h !== '') ops.resize.h = Number(h);
    // inside is the API's default: left out, as the JS client's deliveryUrl leaves it, so both write one URL.
    if ($('fit').value !== 'inside') ops.resize.fit = $('fit').value;
    // attention and entropy choose cover's crop (the API refuses them with the other fits, saying so).
    if ($('position').value !== '') ops.resize.position = positionFromForm();
    if (number('dpr') !== undefined && number('dpr') !== 1) ops.resize.dpr = number('dpr');
  }
  if (number('pad') !== undefined && number('pad') !== 0) ops.pad = number('pad');
  const sharpen = $('sharpen').value.trim();
  if (sharpen !== '') ops.sharpen = sharpen === 'true' ? true : Number(sharpen);
  if ($('format').value !== '') ops.format = $('format').value;
  // Sent even when it is the default list: a delivery URL's f:auto needs it to mean what the JSON form means.
  if ($('format').value === 'auto') {
    ops.formats = [...$('formats').querySelectorAll('input:checked')].map((box) => box.value);
  }
  const quality = $('quality').value.trim();
  if (!$('quality-mode').disabled && $('quality-mode').value !== '') ops.quality = $('quality-mode').value;
  else if (!$('quality').disabled && quality !== '' && Number(quality) !== 80) ops.quality = Number(quality);
  for (const control of document.querySelectorAll('[data-path]')) {
    const [key, field] = control.dataset.path.split('.');
    const value = RULED.has(control.dataset.path) || control.disabled ? undefined : controlValue(control);
    if (value === undefined) continue;
    if (field === undefined) ops[key] = value;
    else (ops[key] ??= {})[field] = value;
  }
  return ops;
}

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** The URL to fetch, when the user gave one (it then replaces any chosen file). */
const sourceUrl = () => $('url').value.trim();

/** The key as the page shows it: masked like the key field. The copied line carries the real key. */
const maskKey = (key) => (key ? `${key.slice(0, 5)}${'•'.repeat(12)}` : '$IMGPIPE_KEY');

function curlLine(key, ops) {
  const ext = ops.format && ops.format !== 'auto' ? ops.format : 'out';
  const body = sourceUrl()
    ? [
        `-H ${shellQuote('Content-Type: application/json')}`,
        `-d ${shellQuote(JSON.stringify({ url: sourceUrl(), operations: ops }))}`,
      ]
    : [
        `-F ${shellQuote(`image=@${chosenFile?.name || 'photo.jpg'}`)}`,
        `-F ${shellQuote(`operations=${JSON.stringify(ops)}`)}`,
      ];
  return [
    'curl -sS',
    `-H ${shellQuote(`Authorization: Bearer ${key || '$IMGPIPE_KEY'}`)}`,
    ...body,
    `-o ${shellQuote(`result.${ext}`)} -D -`,
    shellQuote(`${window.location.origin}/v1/image`),
  ].join(' ');
}

function updateCurl() {
  updateQuality();
  $('point').hidden = $('position').value !== 'point';
  $('formats').hidden = $('format').value !== 'auto';
  $('curl').textContent = curlLine(maskKey($('key').value.trim()), operationsFromForm());
}

/** An error line; `link` (the 429's upgrade_url) is shown as a link after it. */
function showError(text, link) {
  $('error').textContent = text;
  if (link) {
    const a = document.createElement('a');
    a.href = link.href;
    a.textContent = link.label;
    $('error').append(' ', a);
  }
  $('error').hidden = text === '';
}

/** "612.3 KiB → 48.2 KiB · 92 % smaller": what processing saved, or cost. */
function describeSaving(before, after) {
  if (before === undefined) return `${formatBytes(after)} (the original was fetched by the server)`;
  const change = Math.round((1 - after / before) * 100);
  const verdict = change >= 0 ? `${change} % smaller` : `${-change} % larger`;
  return `${formatBytes(before)} → ${formatBytes(after)} · ${verdict}`;
}

/** " · auto chose webp quality 88, SSIMULACRA 2 82.4": what an auto request picked, from the answer's headers. */
function describeChoice(headers) {
  const score = headers.get('x-service-quality-score');
  const chosen = /quality=(\d+)/.exec(headers.get('x-service-operations') ?? '');
  if (score === null && $('format').value !== 'auto') return '';
  const format = headers.get('x-service-output-format') ?? '';
  const quality = chosen ? ` quality ${chosen[1]}` : '';
  return ` · auto chose ${format}${quality}${score === null ? '' : `, SSIMULACRA 2 ${score}`}`;
}

function showImage(img, info, url, bytes) {
  img.onload = () => {
    info.textContent = `${img.naturalWidth}×${img.naturalHeight} px · ${formatBytes(bytes)} (${bytes} bytes)`;
    img.dataset.width = String(img.naturalWidth);
    img.dataset.height = String(img.naturalHeight);
  };
  img.onerror = () => {
    info.textContent = `${formatBytes(bytes)} (${bytes} bytes) · this browser cannot display it`;
  };
  img.src = url;
  img.hidden = false;
}

function chooseFile(file) {
  if (!file) return;
  chosenFile = file;
  $('url').value = '';
  $('drop-label').textContent = `${file.name} (${formatBytes(file.size)})`;
  if (originalUrl) URL.revokeObjectURL(originalUrl);
  originalUrl = URL.createObjectURL(file);
  showImage($('original-img'), $('original-info'), originalUrl, file.size);
  updateCurl();
}

function showHeaders(res) {
  const rows = [];
  for (const [name, value] of res.headers) {
    if (name.startsWith('x-service-') || name === 'x-request-id' || name === 'retry-after') {
      rows.push([name, value]);
    }
  }
  const body = $('headers').tBodies[0];
  body.replaceChildren(
    ...rows.map(([name, value]) => {
      const tr = document.createElement('tr');
      for (const text of [name, value]) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.append(td);
      }
      return tr;
    }),
  );
  const remaining = res.headers.get('x-service-quota-remaining');
  const limit = res.headers.get('x-service-quota-limit');
  $('quota').textContent = remaining === null ? '' : `· quota left this month: ${remaining} of ${limit}`;
}

/** Takes the previous result off the page, so a new error is never shown beside an older image. */
function clearResult() {
  $('result-img').hidden = true;
  $('result-img').removeAttribute('src');
  $('result-info').textContent = '';
  $('saving').hidden = true;
  $('max-bytes-missed').hidden = true;
  $('download').hidden = true;
  if (resultUrl) URL.revokeObjectURL(resultUrl);
  resultUrl = undefined;
  clearPlaceholder();
}

/** A URL replaces the chosen file: its original is shown once Process asks the server about it (showUrlOriginal). */
function useUrl() {
  if (!sourceUrl()) return;
  chosenFile = undefined;
  $('file').value = '';
  $('drop-label').textContent = 'Drop an image here, or';
  $('original-img').hidden = true;
  $('original-img').removeAttribute('src');
  $('original-info').textContent = 'fetched by the server from the URL';
}

/**
 * A URL source's original beside the result: its size and format from POST /v1/image/info (free: no quota unit),
 * its pixels loaded by this browser from the URL itself. Resolves to its bytes, undefined when the server cannot say.
 */
async function showUrlOriginal(url, key) {
  try {
    const res = await fetch('/v1/image/info', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    if (!res.ok) return undefined;
    const info = await res.json();
    showImage($('original-img'), $('original-info'), url, info.bytes);
    return info.bytes;
  } catch {
    return undefined;
  }
}

/**
 * "Could not reach 50.0 KiB: the smallest at quality 30 is 61.2 KiB": said when X-Service-Max-Bytes-Met is false,
 * the cap being the form's max_bytes (a number, or the input's size).
 */
function describeMissedCap(headers, ops, before, after) {
  if (headers.get('x-service-max-bytes-met') !== 'false') return '';
  const cap =
    ops.max_bytes === 'input'
      ? `the original's size${before === undefined ? '' : ` (${formatBytes(before)})`}`
      : formatBytes(Number(ops.max_bytes));
  const quality = /quality=(\d+)/.exec(headers.get('x-service-operations') ?? '')?.[1] ?? '30';
  return `Could not reach ${cap}: the smallest at quality ${quality} is ${formatBytes(after)}.`;
}

async function run(event) {
  event.preventDefault();
  clearTimeout(previewTimer);
  showError('');
  clearResult();
  const key = $('key').value.trim();
  sessionStorage.setItem('imgpipe.key', key);
  const url = sourceUrl();
  if (!chosenFile && !url) return showError('Choose or drop an image, or give its URL, first.');
  const ops = operationsFromForm();
  const headers = { Authorization: `Bearer ${key}` };
  let body;
  if (url) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify({ url, operations: ops });
  } else {
    body = new FormData();
    body.append('image', chosenFile, chosenFile.name);
    body.append('operations', JSON.stringify(ops));
  }
  $('run').disabled = true;
  $('result-info').textContent = 'processing…';
  try {
    const original = url ? showUrlOriginal(url, key) : Promise.resolve(chosenFile.size);
    const res = await fetch('/v1/image', { method: 'POST', headers, body });
    const before = await original;
    showHeaders(res);
    showPlaceholder(res.headers);
    if (!res.ok) {
      const answer = await res.json().catch(() => undefined);
      const err = answer?.error;
      $('result-info').textContent = '';
      const upgrade = err?.upgrade_url ? { href: err.upgrade_url, label: 'Upgrade your plan' } : undefined;
      return showError(err ? `${res.status} ${err.code}: ${err.message}` : `HTTP ${res.status}`, upgrade);
    }
    const blob = await res.blob();
    resultUrl = URL.createObjectURL(blob);
    showImage($('result-img'), $('result-info'), resultUrl, blob.size);
    $('saving').textContent = describeSaving(before, blob.size) + describeChoice(res.headers);
    $('saving').hidden = false;
    $('max-bytes-missed').textContent = describeMissedCap(res.headers, ops, before, blob.size);
    $('max-bytes-missed').hidden = $('max-bytes-missed').textContent === '';
    $('download').href = resultUrl;
    $('download').download = `result.${res.headers.get('x-service-output-format') ?? 'img'}`;
    $('download').hidden = false;
  } catch (err) {
    $('result-info').textContent = '';
    showError(`The request failed: ${err.message}`);
  } finally {
    $('run').disabled = false;
  }
}

$('form').addEventListener('submit', run);
// The key the account or key page kept in this tab, so a new customer does not paste it twice.
$('key').value = sessionStorage.getItem('imgpipe.key') ?? '';
$('file').addEventListener('change', () => chooseFile($('file').files[0]));
$('url').addEventListener('input', useUrl);
$('form').addEventListener('input', updateCurl);
$('form').addEventListener('change', updateCurl);

/**
 * Live preview: once a result is shown, a change to an operation's control (they sit in the fieldsets) runs the
 * request again after a pause, one request at a time, so each control's effect shows without pressing Process.
 */
function schedulePreview() {
  if (!resultUrl) return;
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => {
    if (!$('run').disabled) $('form').requestSubmit();
  }, 600);
}
$('form').addEventListener('change', (event) => {
  if (event.target.closest('fieldset')) schedulePreview();
});
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  chooseFile(e.dataTransfer.files[0]);
});
$('copy-curl').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText(curlLine($('key').value.trim(), operationsFromForm()));
    $('copy-curl').textContent = 'Copied';
  } catch {
    // Clipboard access needs a secure context: show the line with the key, selected, so Ctrl+C works instead.
    $('curl').textContent = curlLine($('key').value.trim(), operationsFromForm());
    window.getSelection().selectAllChildren($('curl'));
  }
});
updateCurl();
