// POST /v1/keys/rotate (Bearer), POST /v1/keys/recover and GET /v1/keys/recover/verify.
import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey, parseBearerToken } from '../../accounts/api-key.ts';
import type { AppContext } from '../../context.ts';
import { apiError } from '../../errors.ts';
import { replaceActiveKey, revokeKeyByHash } from '../../store/keys.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { verifyHandler } from '../verify-page.ts';
import { linkRequestHandler } from './signup.ts';

export async function keyRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  await app.register(rotateRoute, { ctx });
  app.post('/v1/keys/recover', linkRequestHandler(ctx, 'recover'));
  app.get('/v1/keys/recover/verify', verifyHandler(ctx, 'recover'));
}

/** Rotation takes no body; its own scope ignores whatever a client sends (e.g. an empty JSON body). */
async function rotateRoute(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
  app.post('/v1/keys/rotate', { onRequest: requireApiKey(ctx) }, async (request, reply) => {
    const account = accountOf(request);
    const oldHash = hashApiKey(parseBearerToken(request.headers.authorization) ?? '');
    const apiKey = generateApiKey();
    // Revoking exactly the presented key makes two racing rotations of one key yield one new key, not two:
    // the loser finds its key already revoked and gets 401. A racing recovery is absorbed by replaceActiveKey.
    const rotated = await ctx.store.db.transaction().execute(async (trx) => {
      if (!(await revokeKeyByHash(trx, oldHash))) return false;
      await replaceActiveKey(trx, account.accountId, hashApiKey(apiKey));
      return true;
    });
    if (!rotated) throw apiError('invalid_api_key', 'The API key is unknown or has been revoked');
    reply.header('Cache-Control', 'no-store');
    return {
      apiKey,
      email: account.email,
      tier: account.tier,
      message: 'The key you sent is revoked. The new key is shown only this once: store it now.',
    };
  });
}
