// owns: the browser code of the playground (GET /); docs.js beside it only starts Swagger UI on /docs.
const $ = (id) => document.getElementById(id);
let chosenFile;
let resultUrl;
let originalUrl;

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

/** The operations object the form describes; only what the user set, so the API's defaults apply. */
function operationsFromForm() {
  const ops = {};
  const w = $('w').value.trim();
  const h = $('h').value.trim();
  if (w !== '' || h !== '') {
    ops.resize = { fit: $('fit').value };
    if (w !== '') ops.resize.w = Number(w);
    if (h !== '') ops.resize.h = Number(h);
    // attention and entropy choose cover's crop (the API refuses them with the other fits, saying so).
    if ($('position').value !== '') ops.resize.position = $('position').value;
  }
  if ($('format').value !== '') ops.format = $('format').value;
  const quality = $('quality').value.trim();
  if (quality !== '' && Number(quality) !== 80) ops.quality = Number(quality);
  if (!$('strip').checked) ops.strip = false;
  return ops;
}

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

function curlLine(key, fileName, ops) {
  const ext = ops.format ?? 'out';
  return [
    'curl -sS',
    `-H ${shellQuote(`Authorization: Bearer ${key || '$IMGPIPE_KEY'}`)}`,
    `-F ${shellQuote(`image=@${fileName || 'photo.jpg'}`)}`,
    `-F ${shellQuote(`operations=${JSON.stringify(ops)}`)}`,
    `-o ${shellQuote(`result.${ext}`)} -D -`,
    shellQuote(`${window.location.origin}/v1/image`),
  ].join(' ');
}

function updateCurl() {
  $('curl').textContent = curlLine($('key').value.trim(), chosenFile?.name, operationsFromForm());
}

function showError(text) {
  $('error').textContent = text;
  $('error').hidden = text === '';
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
  if (resultUrl) URL.revokeObjectURL(resultUrl);
  resultUrl = undefined;
}

async function run(event) {
  event.preventDefault();
  showError('');
  clearResult();
  const key = $('key').value.trim();
  sessionStorage.setItem('imgpipe.key', key);
  if (!chosenFile) return showError('Choose or drop an image first.');
  const ops = operationsFromForm();
  const form = new FormData();
  form.append('image', chosenFile, chosenFile.name);
  form.append('operations', JSON.stringify(ops));
  $('run').disabled = true;
  $('result-info').textContent = 'processing…';
  try {
    const res = await fetch('/v1/image', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: form,
    });
    showHeaders(res);
    if (!res.ok) {
      const body = await res.json().catch(() => undefined);
      const err = body?.error;
      $('result-info').textContent = '';
      return showError(err ? `${res.status} ${err.code}: ${err.message}` : `HTTP ${res.status}`);
    }
    const blob = await res.blob();
    resultUrl = URL.createObjectURL(blob);
    showImage($('result-img'), $('result-info'), resultUrl, blob.size);
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
for (const id of ['key', 'w', 'h', 'fit', 'position', 'format', 'quality', 'strip']) {
  $(id).addEventListener('input', updateCurl);
  $(id).addEventListener('change', updateCurl);
}
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
    await navigator.clipboard.writeText($('curl').textContent);
    $('copy-curl').textContent = 'Copied';
  } catch {
    // Clipboard access needs a secure context; select the text so Ctrl+C works instead.
    window.getSelection().selectAllChildren($('curl'));
  }
});
updateCurl();
