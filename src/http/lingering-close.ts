// owns: closing a connection whose request body is still arriving without destroying the answer sent on it.
import type { Socket } from 'node:net';

/**
 * How long, and how many more bytes, a refused upload's connection is read and discarded after the answer.
 * Closing a socket with unread bytes makes the kernel send a reset, which can reach the peer before it has read
 * the answer: a proxy streaming the upload (nginx with proxy_request_buffering off) then answers 502 instead of
 * our 413. Reading on briefly lets the peer see the answer and stop sending; the bounds keep a client that goes on
 * sending from holding the connection or costing more than this.
 */
export const LINGER_MS = 2000;
export const LINGER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Makes Node's close of `socket` after the current response a lingering one: the answer is written and the write
 * side shut (FIN), then incoming bytes are discarded until the peer closes, LINGER_MAX_BYTES have arrived or
 * LINGER_MS have passed, whichever comes first; only then is the socket destroyed. Node's HTTP server ends a
 * `Connection: close` response with socket.destroySoon(), which is what this replaces, for this socket only.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    let discarded = 0;
    const close = () => this.destroy();
    const timer = setTimeout(close, LINGER_MS).unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', close);
    this.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_MAX_BYTES) close();
    });
    this.end();
    this.resume();
  };
}
