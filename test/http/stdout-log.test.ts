/**
 * The request log's destination (src/http/request-log.ts, StdoutLog): lines are kept and written in batches by one
 * background write at a time, bounded in memory, written out on flush and on exit. Exercised on a real file, a real
 * pipe whose reader stops reading, and a real process that exits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { StdoutLog } from '../../src/http/request-log.js';

const dir = mkdtempSync(path.join(tmpdir(), 'sf-stdout-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (n: number, pad = 0) => `${JSON.stringify({ n, pad: 'x'.repeat(pad) })}\n`;
const flushed = (log: StdoutLog) => new Promise<void>((resolve) => log.flush(resolve));

describe('StdoutLog', () => {
  it('keeps a few lines until a batch is full or flush is called, then writes them whole and in order', async () => {
    const file = path.join(dir, 'batch.log');
    const fd = openSync(file, 'w');
    try {
      const log = new StdoutLog(fd);
      for (let n = 0; n < 3; n++) log.write(line(n));
      await sleep(50);
      assert.equal(statSync(file).size, 0, 'three short lines wait for the batch');
      await flushed(log);
      assert.deepEqual(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((text) => JSON.parse(text).n), [0, 1, 2]);

      // A batch's worth (4 KiB) goes out without a flush.
      for (let n = 3; n < 60; n++) log.write(line(n, 100));
      for (let wait = 0; statSync(file).size < 4096; wait++) {
        assert.ok(wait < 200, 'a full batch was not written');
        await sleep(10);
      }
      await flushed(log);
      const numbers = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((text) => JSON.parse(text).n);
      assert.deepEqual(numbers, Array.from({ length: 60 }, (_, n) => n));
    } finally {
      closeSync(fd);
    }
  });

  for (const slabBytes of [undefined, 97]) it(`writes lines of any size and any characters as UTF-8, in order, across its buffers (${slabBytes ?? 'default'} bytes each)`, async () => {
    const file = path.join(dir, `sizes-${slabBytes}.log`);
    const fd = openSync(file, 'w');
    try {
      const log = new StdoutLog(fd, undefined, slabBytes);
      // Lines of many lengths, ASCII and not (up to 4 bytes a character), and now and then one longer than a buffer.
      const texts = (n: number) => (n % 500 === 499 ? 'x'.repeat(300_000) : n % 2 ? 'é☕\u2028😀"\\'.repeat(n % 13) : 'x'.repeat(n % 61));
      const written: string[] = [];
      for (let n = 0; n < 2000; n++) {
        const text = `${JSON.stringify({ n, text: texts(n) })}\n`;
        written.push(text);
        assert.equal(log.write(text), true);
        if (n % 100 === 0) await sleep(1);
      }
      await flushed(log);
      const read = readFileSync(file);
      assert.equal(read.length, Buffer.byteLength(written.join('')));
      assert.equal(read.toString('utf8'), written.join(''));
    } finally {
      closeSync(fd);
    }
  });

  it('a reader that stops reading blocks nothing: past the bound lines are dropped and counted; once it reads again every kept line arrives', async () => {
    // cat copies the pipe to its stdout; nobody reads that, so both pipes fill and our writes meet EAGAIN.
    const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
    cat.stdout.pause();
    const fd = (cat.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const log = new StdoutLog(fd, 64 * 1024);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const written = 20_000;
    let kept = 0;
    for (let n = 0; n < written; n++) {
      if (log.write(line(n, 100))) kept++;
      if (n % 500 === 0) await sleep(1);
    }
    await sleep(200);
    clearInterval(ticker);
    assert.ok(ticks > 20, `the event loop kept turning while the pipe was full (${ticks} ticks)`);
    assert.ok(log.droppedLines > 0, 'lines past the bound were dropped');
    assert.equal(log.droppedLines, written - kept, 'every refused line is counted');

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
    cat.stdin.end();
    await once(cat, 'exit');
    assert.equal(received.length, kept);
    assert.ok(received.every((n, i) => i === 0 || n > received[i - 1]!), 'in order');
  });

  it('on exit, the lines still kept are written synchronously', async () => {
    const script = [
      "import { StdoutLog } from './src/http/request-log.ts';",
      'const log = new StdoutLog(1);',
      'for (let n = 0; n < 5; n++) log.write(JSON.stringify({ n }) + "\\n");',
      'process.exit(0);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0);
    assert.deepEqual(output.split('\n').filter(Boolean).map((text) => JSON.parse(text).n), [0, 1, 2, 3, 4]);
  });
});
