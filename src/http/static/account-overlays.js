// owns: the Overlays panel of /account: lists the account's overlays (GET /v1/overlays), uploads one under a name
// (PUT /v1/overlays/{name} with the file as the body) and deletes one. The key comes from sessionStorage.
import { callApi, failure, STORAGE_KEY, statusLine } from './account-api.js';
const $ = (id) => document.getElementById(id);

const say = statusLine('overlay-status');

function row(overlay) {
  const item = document.createElement('li');
  item.dataset.name = overlay.name;
  const name = document.createElement('code');
  name.textContent = overlay.name;
  const facts = document.createElement('span');
  facts.className = 'note';
  facts.textContent = ` ${overlay.format.toUpperCase()}, ${overlay.width}×${overlay.height}, ${(overlay.bytes / 1024).toFixed(1)} KiB, updated ${overlay.updatedAt.slice(0, 10)} `;
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'secondary';
  remove.textContent = 'Delete';
  remove.setAttribute('aria-label', `Delete overlay ${overlay.name}`);
  remove.addEventListener('click', async () => {
    const { res, body } = await callApi('DELETE', `/v1/overlays/${encodeURIComponent(overlay.name)}`);
    if (!res.ok) {
      say(failure(res, body), 'error');
      return;
    }
    say(`Overlay ${overlay.name} deleted.`, 'ok');
    await load();
  });
  item.append(name, facts, remove);
  return item;
}

async function load() {
  if (!sessionStorage.getItem(STORAGE_KEY)) return;
  const { res, body } = await callApi('GET', '/v1/overlays');
  if (!res.ok) return;
  $('overlay-list').replaceChildren(...body.overlays.map(row));
  $('overlay-count').textContent = `${body.overlays.length} of ${body.limit}`;
  $('overlay-empty').hidden = body.overlays.length > 0;
}

$('overlay-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = $('overlay-file').files[0];
  const name = $('overlay-name').value.trim();
  if (!file) {
    say('Choose a PNG or WebP file first.', 'error');
    return;
  }
  say('Uploading…');
  const { res, body } = await callApi('PUT', `/v1/overlays/${encodeURIComponent(name)}`, file);
  if (!res.ok) {
    say(failure(res, body), 'error');
    return;
  }
  say(res.status === 201 ? `Overlay ${body.name} stored.` : `Overlay ${body.name} replaced.`, 'ok');
  $('overlay-form').reset();
  await load();
});

// account.js stores the key on submit (its listener runs first); then this panel loads too.
$('key-form').addEventListener('submit', () => load());
load();
