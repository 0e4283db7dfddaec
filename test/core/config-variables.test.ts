/** `storefront --help` lists every variable the store reads, and a bad HOST is one line naming it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFIG_VARIABLES, configVariablesHelp } from '../../src/config-variables.js';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The names loadConfig reads from an environment (every read recorded, whatever is set). */
function variablesRead(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  loadConfig(recording);
  return read;
}

describe('configuration variables', () => {
  it('loadConfig reads exactly the variables --help lists', () => {
    // With the optional parts set too, so the variables read only beside them are read.
    const read = variablesRead({ SMTP_URL: 'smtp://127.0.0.1:2525', MERCHANT_EMAIL: 'shop@example.com', REDIS_URL: 'redis://127.0.0.1:6379' });
    const listed = new Set(CONFIG_VARIABLES.map((v) => v.name));
    assert.deepEqual([...read].filter((name) => !listed.has(name)).sort(), [], 'read but not listed');
    assert.deepEqual([...listed].filter((name) => !read.has(name)).sort(), [], 'listed but never read');
  });

  it('the help text names each variable once, with its default', () => {
    const help = configVariablesHelp();
    for (const variable of CONFIG_VARIABLES) {
      const lines = help.split('\n').filter((line) => line.trimStart().startsWith(`${variable.name} `));
      assert.equal(lines.length, 1, variable.name);
      assert.match(lines[0]!, new RegExp(`\\(default: ${variable.default.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`));
    }
  });

  it('HOST takes an IP address or a host name; anything else is refused naming HOST', () => {
    for (const host of ['0.0.0.0', '127.0.0.1', '::', 'localhost', 'shop.internal', 'store-1.example.com']) {
      assert.equal(loadConfig({ HOST: host }).host, host, host);
    }
    assert.equal(loadConfig({ HOST: '[::1]' }).host, '::1', 'bracketed as in a URL');
    assert.equal(loadConfig({}).host, '0.0.0.0');
    for (const host of ['not a host', 'http://localhost', 'localhost:3000', '-bad.example', 'a..b', '256.1.1.1.1/8', 'x'.repeat(300)]) {
      assert.throws(
        () => loadConfig({ HOST: host }),
        (error: unknown) => error instanceof ConfigError && error.variable === 'HOST' && !error.message.includes('\n'),
        host,
      );
    }
  });
});
