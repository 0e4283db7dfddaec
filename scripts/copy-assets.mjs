// tsc compiles only TypeScript; the SQL migrations and static assets travel beside the compiled code.
import { cpSync } from 'node:fs';
cpSync('src/db/migrations', 'dist/db/migrations', { recursive: true });
cpSync('src/storefront/pages/assets', 'dist/storefront/pages/assets', { recursive: true });
cpSync('src/admin/assets', 'dist/admin/assets', { recursive: true });
cpSync('src/catalog/demo-assets', 'dist/catalog/demo-assets', { recursive: true });
