/**
 * The log's destination (src/http/request-log.ts, stdoutDestination: pino's asynchronous destination): lines are
 * written in order by background writes, bounded in memory, written out on flush and on exit. Exercised on a real
 * file, a real pipe whose reader stops reading, and a real process that exits.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { stdoutDestination } from '../../src/http/request-log.js';

const dir = mkdtempSync(path.join(tmpdir(), 'sf-stdout-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (n: number, pad = 0) => `${JSON.stringify({ n, pad: 'x'.repeat(pad) })}\n`;
type Destination = ReturnType<typeof stdoutDestination>;
// Its flush ends with an fsync, which a pipe refuses (EINVAL) once everything is written: the callback is what counts.
const flushed = (log: Destination) => new Promise<void>((resolve) => log.flush(() => resolve()));

/** The named pipe opened for writing without blocking, once its reader has it open (before, the open fails: ENXIO). */
async function openWhenRead(fifo: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || attempt > 1000) throw error;
      await sleep(10);
    }
  }
}

describe('stdoutDestination', () => {
  it('writes lines of any size and any characters as UTF-8, in order; flush calls back once all of them are written', async () => {
    const file = path.join(dir, 'sizes.log');
    // The destination owns the descriptor and closes it when destroyed (its periodic flush would write to it).
    const log = stdoutDestination(openSync(file, 'w'));
    try {
      // Lines of many lengths, ASCII and not (up to 4 bytes a character), and now and then a very long one.
      const texts = (n: number) => (n % 500 === 499 ? 'x'.repeat(300_000) : n % 2 ? 'é☕\u2028😀"\\'.repeat(n % 13) : 'x'.repeat(n % 61));
      const written: string[] = [];
      for (let n = 0; n < 2000; n++) {
        const text = `${JSON.stringify({ n, text: texts(n) })}\n`;
        written.push(text);
        log.write(text);
        if (n % 100 === 0) await sleep(1);
      }
      await flushed(log);
      const read = readFileSync(file);
      assert.equal(read.length, Buffer.byteLength(written.join('')));
      assert.equal(read.toString('utf8'), written.join(''));
      assert.equal(log.droppedLines(), 0);
    } finally {
      log.destroy();
    }
  });

  it('a line logged alone is written without a flush: lines wait for company a moment, not for ever', async () => {
    const file = path.join(dir, 'alone.log');
    const log = stdoutDestination(openSync(file, 'w'));
    try {
      log.write(line(1));
      const started = Date.now();
      while (readFileSync(file, 'utf8') !== line(1)) {
        assert.ok(Date.now() - started < 10_000, 'the lone line was not written within 10 s');
        await sleep(20);
      }
    } finally {
      log.destroy();
    }
  });

  it('a reader that stops reading blocks nothing: past the bound lines are dropped and counted; once it reads again every kept line arrives', async () => {
    // cat copies a named pipe to its stdout; nobody reads that, so both pipes fill and our writes meet EAGAIN. The
    // destination owns its end of the named pipe (opened without blocking once cat has it open for reading).
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    cat.stdout.pause();
    const fd = await openWhenRead(fifo);
    const log = stdoutDestination(fd, 64 * 1024);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const written = 20_000;
    let kept = 0;
    for (let n = 0; n < written; n++) {
      const dropped = log.droppedLines();
      log.write(line(n, 100));
      if (log.droppedLines() === dropped) kept++;
      if (n % 500 === 0) await sleep(1);
    }
    await sleep(200);
    clearInterval(ticker);
    assert.ok(ticks > 20, `the event loop kept turning while the pipe was full (${ticks} ticks)`);
    assert.ok(log.droppedLines() > 0, 'lines past the bound were dropped');
    assert.equal(log.droppedLines(), written - kept, 'every refused line is counted');

    // The reader reads again: everything kept arrives, in order, and flush reports when it has.
    const received: number[] = [];
    let rest = '';
    cat.stdout.on('data', (chunk: Buffer) => {
      const text = rest + chunk.toString('utf8');
      const lines = text.split('\n');
      rest = lines.pop()!;
      for (const one of lines) received.push(JSON.parse(one).n);
    });
    cat.stdout.resume();
    await flushed(log);
    log.destroy(); // closes the pipe: cat reads its end and exits
    await once(cat, 'exit');
    assert.equal(received.length, kept);
    assert.ok(received.every((n, i) => i === 0 || n > received[i - 1]!), 'in order');
  });

  it('on exit, the lines a logger has not yet written are written synchronously', async () => {
    const script = [
      "import pino from 'pino';",
      "import { stdoutDestination } from './src/http/request-log.ts';",
      'const log = pino({}, stdoutDestination(1));',
      'for (let n = 0; n < 5000; n++) log.info({ n });',
      'process.exit(0);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0);
    assert.deepEqual(output.split('\n').filter(Boolean).map((text) => JSON.parse(text).n), Array.from({ length: 5000 }, (_, n) => n));
  });
});
