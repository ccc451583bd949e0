// Dumps GET /openapi.json of a server built from this checkout: node --import tsx /tmp/41b/dump-doc.ts out.json
import { writeFileSync } from 'node:fs';
import { testEnv } from '../test/helpers/app.ts';
import { createContext } from '../src/context.ts';
import { loadConfig } from '../src/config.ts';
import { buildServer } from '../src/http/server.ts';
const { env } = testEnv({ MAX_RESIZE_DIMENSION: '4321', PUBLIC_BASE_URL: 'https://img.example.com' });
const ctx = await createContext(loadConfig(env));
const app = await buildServer(ctx);
await app.ready();
const res = await app.inject({ url: '/openapi.json' });
writeFileSync(process.argv[2]!, JSON.stringify(JSON.parse(res.body), null, 2));
await app.close();
await ctx.close();
