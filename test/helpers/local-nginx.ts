// owns: deploy/nginx.conf run by a local nginx, as the load-balanced deployment test and the delivery bench run it:
// the shipped server block with its upstreams, listen port and cache folder made local, included in the http block
// the nginx image's /etc/nginx/nginx.conf gives it, here with its temp, pid and log paths in one folder.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

export const NGINX = '/usr/sbin/nginx';

const TEMP_PATHS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];

/** deploy/nginx.conf with `imgpipe-N:3000` as `upstreams[N-1]` (host:port), listening on 127.0.0.1:`listenPort`. */
export function localServerBlock(upstreams: string[], listenPort: number, cacheDir: string): string {
  return readFileSync('deploy/nginx.conf', 'utf8')
    .replace('proxy_cache_path /var/cache/nginx/imgpipe ', `proxy_cache_path ${cacheDir} `)
    .replace(/server imgpipe-(\d):3000\b/g, (_, n: string) => `server ${upstreams[Number(n) - 1]}`)
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`);
}

/**
 * Writes `serverBlock` and the nginx.conf that includes it into `dir` (access log there or off), and returns nginx's
 * arguments to run them in the foreground.
 */
export function writeLocalNginx(dir: string, serverBlock: string, accessLog: boolean): string[] {
  for (const temp of TEMP_PATHS) mkdirSync(join(dir, temp));
  writeFileSync(join(dir, 'imgpipe.conf'), serverBlock);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `user ${userInfo().username};`,
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 512; }',
      'http {',
      `  access_log ${accessLog ? `${dir}/access.log` : 'off'};`,
      ...TEMP_PATHS.map((temp) => `  ${temp}_temp_path ${dir}/${temp};`),
      `  include ${dir}/imgpipe.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  return ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')];
}
