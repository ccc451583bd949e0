// owns: the playground's overlay and placeholder: the form's `overlay` and `placeholder` operations, and the
// placeholder painted from the answer's X-Service-Placeholder (a ThumbHash, decoded here) and its dominant colour.
import { thumbHashToDataURL } from '/thumbhash.js';

const $ = (id) => document.getElementById(id);

/** The overlay and placeholder operations the form asks for (none when left empty). */
export function overlayOperations() {
  const ops = {};
  const name = $('overlay-name').value.trim();
  if (name !== '') {
    ops.overlay = { name };
    if ($('overlay-gravity').value !== 'southeast') ops.overlay.gravity = $('overlay-gravity').value;
    const opacity = Number($('overlay-opacity').value);
    if (opacity !== 1) ops.overlay.opacity = opacity;
    const width = $('overlay-width').value.trim();
    if (width !== '') ops.overlay.width = Number(width);
    const margin = $('overlay-margin').value.trim();
    if (margin !== '' && Number(margin) !== 0) ops.overlay.margin = Number(margin);
  }
  if ($('placeholder').checked) ops.placeholder = true;
  return ops;
}

/** Paints the placeholder of an answer beside the result, or hides the panel when the answer has none. */
export function showPlaceholder(headers) {
  const hash = headers.get('x-service-placeholder');
  const color = headers.get('x-service-dominant-color');
  $('placeholder-panel').hidden = !hash;
  if (!hash) return;
  const bytes = Uint8Array.from(atob(hash), (c) => c.charCodeAt(0));
  $('placeholder-img').src = thumbHashToDataURL(bytes);
  $('placeholder-img').style.backgroundColor = color ?? '';
  $('placeholder-swatch').style.backgroundColor = color ?? '';
  $('placeholder-color').textContent = color ?? '';
}

/** Before each request: no placeholder of an earlier answer stays beside a new result. */
export function clearPlaceholder() {
  $('placeholder-panel').hidden = true;
  $('placeholder-img').removeAttribute('src');
}

export const OVERLAY_FIELDS = [
  'overlay-name',
  'overlay-gravity',
  'overlay-opacity',
  'overlay-width',
  'overlay-margin',
  'placeholder',
];
