// owns: the playground's placeholder, painted from the answer's X-Service-Placeholder (a ThumbHash, decoded by the
// thumbhash package's own file) beside the result, with the dominant colour.
import { thumbHashToDataURL } from '/thumbhash.js';

const $ = (id) => document.getElementById(id);

/** Paints the placeholder of an answer beside the result, or hides the panel when the answer has none. */
export function showPlaceholder(headers) {
  const hash = headers.get('x-service-placeholder');
  const color = headers.get('x-service-dominant-color');
  $('placeholder-panel').hidden = !hash;
  if (!hash) return;
  const bytes = Uint8Array.from(window.atob(hash), (c) => c.charCodeAt(0));
  $('placeholder-img').src = thumbHashToDataURL(bytes);
  // As wide as the result, so the two compare side by side.
  $('placeholder-img').style.maxWidth = `${headers.get('x-service-output-width') ?? ''}px`;
  $('placeholder-img').style.backgroundColor = color ?? '';
  $('placeholder-swatch').style.backgroundColor = color ?? '';
  $('placeholder-color').textContent = color ?? '';
}

/** Before each request: no placeholder of an earlier answer stays beside a new result. */
export function clearPlaceholder() {
  $('placeholder-panel').hidden = true;
  $('placeholder-img').removeAttribute('src');
}
