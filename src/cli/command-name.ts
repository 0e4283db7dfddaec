/**
 * How the merchant runs the store's commands here, as the banner and the merchant's mails name them: from a checkout
 * (the project's sources beside the running code, and tsx to run them) `npm run storefront -- COMMAND`, in the
 * checkout's folder; where only the built package is (installed, a container) its binary, `storefront COMMAND`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHECKOUT_COMMAND = 'npm run storefront --';
export const INSTALLED_COMMAND = 'storefront';

/** The project's folder: this file is src/cli/ in a checkout, dist/cli/ once built. */
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run storefront --` in a checkout, `storefront` where the package is installed; `root` is the project's folder. */
export function storefrontCommand(root: string = PROJECT_ROOT): string {
  const checkout = existsSync(path.join(root, 'src', 'main.ts')) && existsSync(path.join(root, 'node_modules', 'tsx', 'package.json'));
  return checkout ? CHECKOUT_COMMAND : INSTALLED_COMMAND;
}
