// ipx as its README serves it: createIPX with HTTP storage (only the bench's loopback origin) on node:http.
import { createServer } from 'node:http';
import { createIPX, createIPXNodeServer, ipxHttpStorage } from 'ipx';

const ipx = createIPX({ httpStorage: ipxHttpStorage({ domains: ['127.0.0.1'] }) });
createServer(createIPXNodeServer(ipx)).listen(Number(process.env.PORT), '127.0.0.1');
