/**
 * The project's root directory. scripts/test.mjs runs the tests compiled, from node_modules/.test-build/, so a
 * test that reads a file outside test/ and src/ (the README, vendor/, the sources as written) finds it from here,
 * not from where its own module is.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const PROJECT_ROOT: string = process.env.STOREFRONT_PROJECT_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));

/** The same, as a file: URL ending in a slash (for `new URL('vendor/…', PROJECT_ROOT_URL)`). */
export const PROJECT_ROOT_URL: URL = pathToFileURL(path.join(PROJECT_ROOT, path.sep));
