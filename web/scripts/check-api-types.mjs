// The types the console compiles against (src/lib/api-schema.d.ts) are those
// of the server's route table: openapi.json is checked against the server by
// its Go test (TestConsoleAPISnapshotIsCurrent), and the types against
// openapi.json here, as openapi-typescript generates them. Part of `npm test`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'berth-api-types-'));
try {
  const out = join(dir, 'api-schema.d.ts');
  execFileSync(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', 'src/lib/openapi.json', '-o', out], { stdio: 'pipe' });
  if (readFileSync(out, 'utf8') !== readFileSync('src/lib/api-schema.d.ts', 'utf8')) {
    console.error('src/lib/api-schema.d.ts is stale: run `make api-types` and commit it');
    process.exit(1);
  }
  console.log('api-schema.d.ts matches openapi.json');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
