import { readFileSync } from 'node:fs';
import { createRegistry } from '@profkit/core';
import fuchsia from '@profkit/fuchsia-sampler';
const b = new Uint8Array(readFileSync(process.argv[2]));
const reg = createRegistry([fuchsia]);
const r = await reg.read(b, { format: 'fuchsia-sampler', fileName: 'x' });
console.log('read ok', r.profile.samples.value.length);
const w = await reg.serialize(r.profile, { format: 'fuchsia-sampler', validate: false });
console.log('write ok');
