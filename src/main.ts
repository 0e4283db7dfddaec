#!/usr/bin/env node
/** The storefront CLI: serve | migrate | import FILE | stock [set SKU QUANTITY] | orders [show|capture|fulfill|cancel|refund ID] | outbox [retry ID]. */
import { setFlagsFromString } from 'node:v8';
import { runCommandLine } from './cli/command-line.js';

const argv = process.argv.slice(2);
// A command that opens the embedded database for a moment (all but serve, and import, which may write for minutes)
// runs its WebAssembly on V8's baseline compiler alone: optimising PostgreSQL's code cost a command more CPU than
// the command itself (`storefront stock` took about 2x as long). Set before the database's module is compiled.
if (argv[0] !== undefined && argv[0] !== 'serve' && argv[0] !== 'import') setFlagsFromString('--liftoff-only');

void runCommandLine(argv, { env: process.env, stdout: process.stdout, stderr: process.stderr }).then((code) => {
  // A failure ends the process at once (a start that failed may leave sockets or timers behind); success lets it end
  // by itself (serve keeps serving).
  if (code !== 0) process.exit(code);
});
