/**
 * `storefront serve` stops gracefully on SIGTERM or SIGINT, as a real process: it stops accepting connections at
 * once (a merchant command under way on the control socket included), lets a request under way finish (answered
 * 200, its connection then closed), closes the database and exits 0 well within the 10 s drain; a request still
 * under way when the drain ends has its connection closed; a second signal exits at once. Every log line of a
 * request carries its request id.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { controlSocketPath } from '../../src/cli/control-socket.js';
import { freePort } from '../helpers/browser.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-shutdown-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Server {
  process: ChildProcess;
  port: number;
  /** Everything the process wrote on stdout so far (pino JSON lines). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

async function startServer(name: string): Promise<Server> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env = { ...process.env, DATA_DIR: path.join(scratch, name), PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin, RATE_LIMIT: 'off', LOG_LEVEL: 'info' };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const start = Date.now();
  while ((await fetch(`${origin}/healthz`).catch(() => undefined))?.status !== 200) {
    if (Date.now() - start > 60_000) assert.fail('the store did not start within 60 s');
    if (child.exitCode !== null) assert.fail(`the store exited with ${child.exitCode}`);
    await sleep(100);
  }
  return { process: child, port, output: () => stdout, exited };
}

/** Opens a connection and sends a request's head, holding back its 2-byte body until `finish` is called. */
async function slowRequest(port: number): Promise<{ finish(): void; answer: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(`POST /cart/clear.js HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  const answer = new Promise<string>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  return { finish: () => socket.write('{}'), answer };
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('storefront serve stops gracefully', () => {
  it('on SIGTERM: refuses new connections, finishes the request under way with 200, exits 0 within 10 s', async () => {
    const server = await startServer('graceful');
    try {
      const read = await fetch(`http://127.0.0.1:${server.port}/products/decaf-capsules.js`);
      assert.equal(read.status, 200);
      const requestId = read.headers.get('x-request-id')!;

      const inFlight = await slowRequest(server.port);
      await sleep(200); // the server has the request's head
      const signalled = Date.now();
      server.process.kill('SIGTERM');
      await sleep(500);
      assert.equal(await connects(server.port), false, 'a new connection is refused while draining');
      assert.equal(server.process.exitCode, null, 'the process waits for the request under way');

      inFlight.finish();
      const answer = await inFlight.answer;
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);

      const exit = await server.exited;
      assert.equal(exit.code, 0);
      assert.ok(exit.at - signalled < 10_000, `exited ${exit.at - signalled} ms after SIGTERM`);

      const lines = server.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      const ofRead = lines.filter((line) => line.request_id === requestId);
      assert.equal(ofRead.length, 1, 'the request is logged once, when it is answered, with its id');
      assert.equal(ofRead[0]!.msg, 'request completed');
      for (const line of lines.filter((l) => l.msg === 'request completed')) assert.match(String(line.request_id), /^[0-9a-f-]{36}$/);
      assert.ok(
        lines.some((line) => line.msg === 'request completed' && line.path === '/cart/clear.js' && line.status === 200),
        'the request finished during the drain is logged before the process exits',
      );
      assert.ok(lines.some((line) => line.msg === 'stopped'));
    } finally {
      server.process.kill('SIGKILL');
    }
  });

  it('a merchant command half-sent on the control socket does not keep the app taking requests', async () => {
    const server = await startServer('half-sent-command');
    try {
      // A command whose body has not come yet (a large import uploading, a merchant's CLI suspended): its connection is busy.
      const command = net.connect(controlSocketPath(path.join(scratch, 'half-sent-command')));
      await new Promise<void>((resolve, reject) => command.once('connect', resolve).once('error', reject));
      command.on('error', () => {});
      command.write('POST /stock HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n');
      await sleep(200);
      const signalled = Date.now();
      server.process.kill('SIGTERM');
      await sleep(500);
      assert.equal(await connects(server.port), false, 'the app stops taking connections at once, while the command is still under way');
      assert.equal(server.process.exitCode, null, 'the process waits for the command');
      command.destroy(); // the merchant gives up
      const exit = await server.exited;
      assert.equal(exit.code, 0, server.output());
      assert.ok(exit.at - signalled < 10_000, `exited ${exit.at - signalled} ms after SIGTERM`);
    } finally {
      server.process.kill('SIGKILL');
    }
  });

  it('a request still under way when the 10 s drain ends has its connection closed; the process then exits 0', async () => {
    const server = await startServer('drain-deadline');
    try {
      const inFlight = await slowRequest(server.port); // its body never comes
      await sleep(200);
      const signalled = Date.now();
      server.process.kill('SIGTERM');
      const answer = await inFlight.answer;
      const closedAfter = Date.now() - signalled;
      assert.equal(answer, '', 'the request is not answered: its connection is closed');
      assert.ok(closedAfter >= 9_500, `the connection was kept for the drain (closed ${closedAfter} ms after SIGTERM)`);
      const exit = await server.exited;
      assert.equal(exit.code, 0, server.output());
      const lines = server.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(lines.some((line) => line.level === 40 && line.msg === 'requests still under way after the drain: closing their connections'));
      assert.equal(lines.at(-1)!.msg, 'stopped');
    } finally {
      server.process.kill('SIGKILL');
    }
  });

  it('a signal while the store starts: the embedded database is opened whole and closed, the process exits 0, and the next start serves', async (t) => {
    const port = await freePort();
    const dataDir = path.join(scratch, 'stopped-while-starting');
    const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT: 'off', LOG_LEVEL: 'info' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // The data directory appears when the store begins to open its database (creating it, migrating, seeding).
      for (const deadline = Date.now() + 60_000; !existsSync(dataDir); await sleep(5)) {
        assert.ok(Date.now() < deadline && child.exitCode === null, 'the store began to open its database');
      }
      child.kill('SIGTERM');
      assert.equal(await exited, 0, `${stderr}\n${stdout}`);
      const stoppedEarly = /SIGTERM while starting/.test(stderr) && /stopped before serving/.test(stderr);
      t.diagnostic(stoppedEarly ? 'the signal came while the database was opening' : 'the signal came after the database was open');
      assert.ok(stoppedEarly || stdout.includes('"msg":"stopped"'), `${stderr}\n${stdout}`);
      assert.doesNotMatch(stderr, /Error|at .*\.(ts|js):\d+/, 'no stack trace');
    } finally {
      child.kill('SIGKILL');
    }
    // The database was left whole: the next start opens it and serves the demo catalog.
    const server = await startServer('stopped-while-starting');
    try {
      const read = await fetch(`http://127.0.0.1:${server.port}/products/decaf-capsules.js`);
      assert.equal(read.status, 200);
      server.process.kill('SIGTERM');
      assert.equal((await server.exited).code, 0);
    } finally {
      server.process.kill('SIGKILL');
    }
  });

  it('a second signal exits at once, without waiting for the request under way', async () => {
    const server = await startServer('impatient');
    try {
      const inFlight = await slowRequest(server.port);
      await sleep(200);
      server.process.kill('SIGINT');
      await sleep(300);
      assert.equal(server.process.exitCode, null, 'the first signal waits for the request');
      const second = Date.now();
      server.process.kill('SIGINT');
      const exit = await server.exited;
      assert.ok(exit.at - second < 2000, `exited ${exit.at - second} ms after the second signal`);
      assert.notEqual(exit.code, 0);
      await inFlight.answer.catch(() => '');
    } finally {
      server.process.kill('SIGKILL');
    }
  });
});
