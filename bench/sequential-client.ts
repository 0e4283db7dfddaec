/**
 * A client for bench/instructions.sh: GETs one path again and again, one request at a time over a keep-alive
 * connection, so that the server's work per answer can be counted. Warms the server up over two connections (the
 * first closed, so that closing a connection is warm too), then runs the counted requests on the second, between
 * the two commands given (callgrind_control turning instrumentation on and off).
 *   sequential-client.ts PORT PATH WARM_REQUESTS COUNTED_REQUESTS "COMMAND BEFORE" "COMMAND AFTER"
 */
import { execSync } from 'node:child_process';
import http from 'node:http';

const [port, path, warm, counted, before, after] = process.argv.slice(2);

async function run(agent: http.Agent, requests: number): Promise<number> {
  let failed = 0;
  for (let i = 0; i < requests; i++) {
    await new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: Number(port), path, agent }, (response) => {
          if (response.statusCode !== 200) failed++;
          response.resume().on('end', resolve);
        })
        .on('error', reject);
    });
  }
  return failed;
}

const first = new http.Agent({ keepAlive: true, maxSockets: 1 });
let failed = await run(first, Number(warm) / 2);
first.destroy();
await new Promise((resolve) => setTimeout(resolve, 2_000));
const second = new http.Agent({ keepAlive: true, maxSockets: 1 });
failed += await run(second, Number(warm) / 2);
execSync(before!, { stdio: 'ignore' });
failed += await run(second, Number(counted));
execSync(after!, { stdio: 'ignore' });
second.destroy();
if (failed > 0) {
  console.error(`${failed} answers were not 200`);
  process.exit(1);
}
