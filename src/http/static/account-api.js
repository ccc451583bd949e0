// owns: what the /account panels share: an API call with the key kept in sessionStorage (as account.js keeps it),
// a panel's status line and an error answer's words.
export const STORAGE_KEY = 'imgpipe.key';

/** Calls the API with the kept key; `body` goes as JSON, or as it is when it is a file (with its own type). */
export async function callApi(method, path, body) {
  const file = body instanceof Blob;
  const type = file ? body.type || 'application/octet-stream' : 'application/json';
  const res = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${sessionStorage.getItem(STORAGE_KEY)}`,
      accept: 'application/json',
      ...(body ? { 'content-type': type } : {}),
    },
    body: body && !file ? JSON.stringify(body) : body,
  });
  return { res, body: await res.json().catch(() => ({})) };
}

/** A writer of the status line with this id: its text and its kind ('', 'ok' or 'error', as site.css styles them). */
export function statusLine(id) {
  return (text, kind = '') => {
    const line = document.getElementById(id);
    line.textContent = text;
    line.className = `status ${kind}`;
  };
}

export const failure = (res, body) => body?.error?.message ?? `The request failed (HTTP ${res.status}).`;
