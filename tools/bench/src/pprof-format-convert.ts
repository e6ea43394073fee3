/**
 * A whole-process pprof → pprof conversion with the pprof-format package (the peer of the
 * `views` suite's convert row): read the file, gunzip, decode, encode, gzip (level 6, as Go
 * writes), write. `node pprof-format-convert.js IN OUT`.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: node pprof-format-convert.js IN OUT\n');
  process.exit(2);
}
const profile = Profile.decode(gunzipSync(readFileSync(input)));
writeFileSync(output, gzipSync(profile.encode(), { level: 6 }));
