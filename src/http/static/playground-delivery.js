// owns: the playground's "Copy as delivery URL": signs the form's options for an image URL with a delivery secret
// typed in this tab (Web Crypto HMAC-SHA-256, as clients/js deliveryUrl), copies the URL and shows its image, or
// the error the URL answers, as the form shows its own.
const $ = (id) => document.getElementById(id);

/** The form's options as delivery URL segments, in the server's order; only what the user set. */
function optionSegments() {
  const segments = [];
  const w = $('w').value.trim();
  const h = $('h').value.trim();
  if (w !== '') segments.push(`w:${Number(w)}`);
  if (h !== '') segments.push(`h:${Number(h)}`);
  if (w !== '' || h !== '') segments.push(`fit:${$('fit').value}`);
  if ($('delivery-auto').checked) segments.push('f:auto');
  else if ($('format').value !== '') segments.push(`f:${$('format').value}`);
  const quality = $('quality').value.trim();
  if (quality !== '' && Number(quality) !== 80) segments.push(`q:${Number(quality)}`);
  if (!$('strip').checked) segments.push('strip:false');
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
  const signed = [...optionSegments(), encodeURIComponent(source)].join('/');
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
