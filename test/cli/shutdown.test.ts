/**
 * `storefront serve` stops gracefully on SIGTERM or SIGINT, as a real process: it stops accepting connections at
 * once (a merchant command under way on the control socket included), lets a request under way finish (answered
 * 200, its connection then closed), closes the database and exits 0 well within the 10 s drain; a request still
 * under way when the drain ends has its connection closed; a second signal exits at once. Every log line of a
 * request carries its request id.
 *
 * No step waits a fixed time for the process to get somewhere (a loaded machine may not schedule it for seconds):
 * a request sent with `Expect: 100-continue` is known to be under way once its `100 Continue` comes back (Node
 * writes it only after parsing the head, as it dispatches the request), a signal is known to be handled once the
 * listener refuses connections or the log says so, and "did not wait for the drain" is read from the log, not a clock.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it, type TestContext } from 'node:test';
import { controlSocketPath } from '../../src/cli/control-socket.js';
import { freePort } from '../helpers/browser.js';
import { newDataDir, storefrontArgs } from '../helpers/cli.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'sf-shutdown-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Server {
  process: ChildProcess;
  port: number;
  /** Everything the process wrote on stdout so far (pino JSON lines). */
  output(): string;
  /** Once the process has exited and its output has all been read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** The warning the store logs when its drain runs out with requests still under way. */
const DRAIN_RAN_OUT = 'requests still under way after the drain: closing their connections';
/** How long a step may take to be seen on a slow, loaded machine before the test gives up on it. */
const STEP_LIMIT_MS = 15_000;

/** Polls until `check` holds; returns the milliseconds it took, or fails after `limitMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = STEP_LIMIT_MS): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) assert.fail(`${what}: not seen within ${limitMs} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

async function startServer(name: string): Promise<Server> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env = { ...process.env, DATA_DIR: newDataDir(path.join(scratch, name)), PORT: String(port), HOST: '127.0.0.1', BASE_URL: origin, RATE_LIMIT: 'off', LOG_LEVEL: 'info' };
  const child = spawn(process.execPath, storefrontArgs('serve'), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  // 'close', not 'exit': the last lines the process wrote may still be in the pipe when it exits.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const start = Date.now();
  while ((await fetch(`${origin}/healthz`).catch(() => undefined))?.status !== 200) {
    if (child.exitCode !== null) assert.fail(`the store exited with ${child.exitCode}`);
    if (Date.now() - start > 60_000) {
      // Left running, it would keep this test process from ending.
      child.kill('SIGKILL');
      assert.fail('the store did not start within 60 s');
    }
    await sleep(100);
  }
  return { process: child, port, output: () => stdout, exited };
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

/**
 * Sends a request's head on `socket` with `Expect: 100-continue`, holding back its 2-byte body, and returns once the
 * server has the request under way: its `100 Continue` has come back. `answer` is what follows that interim answer
 * until the connection closes; `ended` tells whether the server has ended the connection; `finish` sends the body.
 */
async function halfSent(t: TestContext, socket: net.Socket, head: string): Promise<{ finish(): void; answer: Promise<string>; ended(): boolean }> {
  let received = '';
  let ended = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  socket.once('end', () => (ended = true));
  const closed = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('close', () => resolve());
  });
  closed.catch(() => {}); // awaited through `answer`
  socket.write(`${head}Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`);
  const took = await until('the server has the request under way (its 100 Continue)', () => received.length > 0);
  assert.ok(received.startsWith(CONTINUE), `the interim answer comes first: ${JSON.stringify(received.slice(0, 200))}`);
  t.diagnostic(`the request was under way ${took} ms after its head was sent`);
  const answer = closed.then(() => received.slice(CONTINUE.length));
  return { finish: () => socket.write('{}'), answer, ended: () => ended };
}

/** A request on the store's port, under way (see halfSent) until `finish` is called. */
async function slowRequest(t: TestContext, port: number): Promise<{ finish(): void; answer: Promise<string>; ended(): boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return halfSent(t, socket, `POST /cart/clear.js HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
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

/**
 * Waits until the store's port refuses connections (the signal was handled) and checks that `pending` was still
 * under way then: the port was closed at once, not once the drain ran out. Returns the milliseconds since `since`.
 */
async function refusesConnections(port: number, since: number, pending: { ended(): boolean }, what: string): Promise<number> {
  await until('the port refusing connections', async () => !(await connects(port)));
  const took = Date.now() - since;
  // The server would have ended `pending` before it closed the port: let what came in with the refusal be read.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(pending.ended(), false, `the port refused connections (${took} ms after the signal) while ${what} was still under way`);
  return took;
}

/** The process's log lines (pino JSON). */
function logLines(server: Server): Record<string, unknown>[] {
  return server.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

// The drain test waits the 10 s drain out with nothing to do: the other cases run meanwhile, one after another.
describe('storefront serve stops gracefully', { concurrency: true }, () => {
  it('a request still under way when the 10 s drain ends has its connection closed; the process then exits 0', async (t) => {
    const server = await startServer('drain-deadline');
    try {
      const inFlight = await slowRequest(t, server.port); // its body never comes
      const signalled = Date.now();
      server.process.kill('SIGTERM');
      const answer = await inFlight.answer;
      const closedAfter = Date.now() - signalled;
      assert.equal(answer, '', 'the request is not answered: its connection is closed');
      assert.ok(closedAfter >= 9_500, `the connection was kept for the drain (closed ${closedAfter} ms after SIGTERM)`);
      const exit = await server.exited;
      assert.equal(exit.code, 0, server.output());
      const lines = logLines(server);
      assert.ok(lines.some((line) => line.level === 40 && line.msg === DRAIN_RAN_OUT));
      assert.equal(lines.at(-1)!.msg, 'stopped');
    } finally {
      server.process.kill('SIGKILL');
    }
  });

  describe('the other cases, one after another', { concurrency: 1 }, () => {
    it('on SIGTERM: refuses new connections, finishes the request under way with 200, exits 0 within 10 s', async (t) => {
      const server = await startServer('graceful');
      try {
        const read = await fetch(`http://127.0.0.1:${server.port}/products/decaf-capsules.js`);
        assert.equal(read.status, 200);
        const requestId = read.headers.get('x-request-id')!;

        const inFlight = await slowRequest(t, server.port);
        const signalled = Date.now();
        server.process.kill('SIGTERM');
        // A new connection is refused while draining (or the poll fails).
        t.diagnostic(`connections refused ${await refusesConnections(server.port, signalled, inFlight, 'the request')} ms after SIGTERM`);
        assert.equal(server.process.exitCode, null, 'the process waits for the request under way');

        inFlight.finish();
        const answer = await inFlight.answer;
        assert.match(answer, /^HTTP\/1\.1 200 /);
        assert.match(answer, /\r\nconnection: close\r\n/i);
        assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);

        const exit = await server.exited;
        assert.equal(exit.code, 0, server.output());
        t.diagnostic(`exited ${exit.at - signalled} ms after SIGTERM`);

        const lines = logLines(server);
        // Within the 10 s drain: the process ended because the request finished, not because the drain ran out.
        assert.ok(!lines.some((line) => line.msg === DRAIN_RAN_OUT), 'the drain did not run out');
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

    it('a merchant command half-sent on the control socket does not keep the app taking requests', async (t) => {
      const server = await startServer('half-sent-command');
      try {
        // A command whose body has not come yet (a large import uploading, a merchant's CLI suspended): its connection is busy.
        const command = net.connect(controlSocketPath(path.join(scratch, 'half-sent-command')));
        await new Promise<void>((resolve, reject) => command.once('connect', resolve).once('error', reject));
        command.on('error', () => {});
        // The control socket is a Node HTTP server too: its 100 Continue says the command is under way.
        const pending = await halfSent(t, command, 'POST /stock HTTP/1.1\r\nHost: localhost\r\n');
        pending.answer.catch(() => {});
        const signalled = Date.now();
        server.process.kill('SIGTERM');
        // The app stops taking connections at once, while the command is still under way (or the poll fails).
        t.diagnostic(`connections refused ${await refusesConnections(server.port, signalled, pending, 'the command')} ms after SIGTERM`);
        assert.equal(server.process.exitCode, null, 'the process waits for the command');
        command.destroy(); // the merchant gives up
        const exit = await server.exited;
        assert.equal(exit.code, 0, server.output());
        t.diagnostic(`exited ${exit.at - signalled} ms after SIGTERM`);
        assert.ok(!logLines(server).some((line) => line.msg === DRAIN_RAN_OUT), 'the process ended when the command gave up, not when the drain ran out');
      } finally {
        server.process.kill('SIGKILL');
      }
    });

    it('a signal while the store starts: the embedded database is opened whole and closed, the process exits 0, and the next start serves', async (t) => {
      const port = await freePort();
      const dataDir = path.join(scratch, 'stopped-while-starting');
      const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', BASE_URL: `http://127.0.0.1:${port}`, RATE_LIMIT: 'off', LOG_LEVEL: 'info' };
      const child = spawn(process.execPath, storefrontArgs('serve'), { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

    it('a second signal exits at once, without waiting for the request under way', async (t) => {
      const server = await startServer('impatient');
      try {
        const inFlight = await slowRequest(t, server.port);
        server.process.kill('SIGINT');
        await until('the first signal handled (its "shutting down" log line)', () => server.output().includes('"msg":"shutting down'));
        assert.equal(server.process.exitCode, null, 'the first signal waits for the request');
        const second = Date.now();
        server.process.kill('SIGINT');
        const exit = await server.exited;
        t.diagnostic(`exited ${exit.at - second} ms after the second signal`);
        assert.notEqual(exit.code, 0);
        // Waiting for the request would have ended the drain (its warning logged) and exited 0.
        assert.ok(!server.output().includes(DRAIN_RAN_OUT), 'the process did not wait for the drain to run out');
        await inFlight.answer.catch(() => '');
      } finally {
        server.process.kill('SIGKILL');
      }
    });
  });
});
