const c0 = process.cpuUsage();
const ms = () => { const c = process.cpuUsage(c0); return ((c.user + c.system) / 1000).toFixed(0); };
await import('./src/http/server.ts');
console.log('server import', ms());
