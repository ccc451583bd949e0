// owns: the CORS headers of delivery answers. Any page may read one (`<img crossorigin>`, a canvas, fetch): the
// image is public and no cookie or key is involved. Every answer of GET /v1/u/… carries them (images, 304s, errors,
// a path the router cannot read); answers of the Bearer-key endpoints do not.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DELIVERY_PREFIX } from '../delivery/url.ts';

/** `x-service-cache` as documented: `X-Service-Cache`. */
function canonicalName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** On an answer to GET (or HEAD) /v1/u/…: Access-Control-Allow-Origin and the X-Service-* headers it exposes. */
export function addDeliveryCrossOrigin(request: FastifyRequest, reply: FastifyReply): void {
  if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.url.startsWith(DELIVERY_PREFIX))
    return;
  reply.header('Access-Control-Allow-Origin', '*');
  const exposed = Object.keys(reply.getHeaders())
    .filter((name) => name.toLowerCase().startsWith('x-service-'))
    .map(canonicalName);
  if (exposed.length > 0) reply.header('Access-Control-Expose-Headers', exposed.join(', '));
}

/** Set as the answer is sent, so every header of it is known (errors and not-found answers go through it too). */
export function registerDeliveryCrossOrigin(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    addDeliveryCrossOrigin(request, reply);
    done(null, payload);
  });
}
