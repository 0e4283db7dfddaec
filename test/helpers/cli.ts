/** The storefront CLI as a merchant runs it, in its own process (through tsx, from the checkout). */
import { spawnSync } from 'node:child_process';

export function runCli(args: string[], env: Record<string, string>): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
