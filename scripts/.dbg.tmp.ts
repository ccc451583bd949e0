import { testEnv } from '../test/helpers/app.ts';
import { createContext } from '../src/context.ts';
import { loadConfig } from '../src/config.ts';
import { buildServer } from '../src/http/server.ts';
import { openApiDocument } from '../src/http/openapi.ts';
const { env } = testEnv({});
const ctx = await createContext(loadConfig(env));
const app = await buildServer(ctx);
await app.ready();
try { openApiDocument(app, ctx); } catch (e) { console.error(e); }
await app.close(); await ctx.close();
