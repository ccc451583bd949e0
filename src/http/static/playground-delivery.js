// owns: the playground's "Copy as delivery URL": writes the form's operations (the object POST /v1/image gets) as
// the registry's URL options, signs them for an image URL with a delivery secret typed in this tab (Web Crypto
// HMAC-SHA-256, as clients/js deliveryUrl), copies the URL and shows its image, or the error the URL answers, as the
// form shows its own.
import { operationsFromForm } from './playground.js';

const $ = (id) => document.getElementById(id);

/** The registry's URL options ({ name, path }), in the server's order: the page carries them as JSON. */
const URL_OPTIONS = JSON.parse($('url-options').textContent);

/**
 * A JSON value as its URL option writes it (the registry's kinds): a list comma-separated, a point `x,y`, an object
 * of the option's `fields` in their order, a colour without its `#`.
 */
function optionText(option, value) {
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object')
    return (option.fields ?? ['x', 'y']).map((field) => value[field] ?? 0).join(',');
  if (option.kind === 'colour') return String(value).replace(/^#/, '');
  return String(value);
}

/** The JSON paths of `ops`' values (`resize.w`, `format`), the ones a URL option must carry. */
function valuePaths(ops) {
  return Object.entries(ops).flatMap(([key, value]) =>
    URL_OPTIONS.some((o) => o.path[0] === key && o.path.length === 2)
      ? Object.keys(value).map((field) => `${key}.${field}`)
      : [key],
  );
}

/** The operations as URL segments in the server's order; throws naming a field no URL option carries. */
function optionSegments(ops) {
  const carried = new Set(URL_OPTIONS.map((o) => o.path.join('.')));
  const lost = valuePaths(ops).filter((path) => !carried.has(path));
  if (lost.length > 0) throw new Error(`A delivery URL cannot say ${lost.join(', ')}`);
  const segments = [];
  for (const option of URL_OPTIONS) {
    const { name, path } = option;
    const value = path.length === 2 ? ops[path[0]]?.[path[1]] : ops[path[0]];
    if (value !== undefined) segments.push(`${name}:${optionText(option, value)}`);
  }
  return segments;
}

async function hmacBase64url(secret, text) {
  const encoder = new globalThis.TextEncoder();
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(text)));
  return globalThis
    .btoa(String.fromCharCode(...mac))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function showError(text) {
  $('delivery-error').textContent = text;
  $('delivery-error').hidden = text === '';
}

$('copy-delivery').addEventListener('click', async () => {
  showError('');
  const source = $('delivery-source').value.trim();
  const secret = $('delivery-secret').value.trim();
  if (!source || !secret) return showError('Enter the image URL and your delivery secret.');
  const res = await fetch('/v1/delivery', { headers: { authorization: `Bearer ${$('key').value.trim()}` } });
  const settings = await res.json().catch(() => ({}));
  if (!res.ok) return showError(settings.error?.message ?? `HTTP ${res.status}`);
  let segments;
  try {
    segments = optionSegments(operationsFromForm());
  } catch (err) {
    return showError(err.message);
  }
  const signed = [...segments, encodeURIComponent(source)].join('/');
  // This server, as the curl line uses: the page's own origin (a CDN in front would take its place).
  const prefix = `${window.location.origin}/v1/u/${encodeURIComponent(settings.accountId)}/`;
  const url = `${prefix}${await hmacBase64url(secret, signed)}/${signed}`;
  $('delivery-url').textContent = url;
  $('delivery-img').hidden = true;
  // Fetched here rather than by the <img>, which would show a broken image without its reason. The Accept is a
  // browser's image Accept, so f:auto makes the derivative an <img> of this browser gets.
  try {
    const preview = await fetch(url, { headers: { accept: 'image/avif,image/webp,*/*' } });
    if (!preview.ok) {
      const err = (await preview.json().catch(() => ({}))).error;
      showError(err ? `${preview.status} ${err.code}: ${err.message}` : `HTTP ${preview.status}`);
    } else {
      if ($('delivery-img').src.startsWith('blob:')) URL.revokeObjectURL($('delivery-img').src);
      $('delivery-img').src = URL.createObjectURL(await preview.blob());
      $('delivery-img').hidden = false;
    }
  } catch (err) {
    showError(`The request failed: ${err.message}`);
  }
  try {
    await navigator.clipboard.writeText(url);
    $('copy-delivery').textContent = 'Copied';
  } catch {
    window.getSelection().selectAllChildren($('delivery-url'));
  }
});
