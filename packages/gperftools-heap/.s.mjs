import { ProfileBuilder } from '@profkit/core';
import { writeFileSync } from 'node:fs';
import { writeCpuProfile, writeHeapText } from './dist/index.js';
let seed = 1; const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const hb = new ProfileBuilder({ sampleTypes: [{ type: 'objects', unit: 'count' }, { type: 'space', unit: 'bytes' }] });
const hl = []; for (let i = 0; i < 20000; i++) hl.push(hb.internLocation({ address: 0x7f0000400000n + BigInt(i) * 16n }));
for (let i = 0; i < 100000; i++) { const st = []; for (let d = 0; d < 20; d++) st.push(hl[Math.floor(r() * hl.length)]); hb.addSample(st, [1n, 64n]); }
const hp = hb.build();
writeFileSync('/tmp/gperf-scratch/big.heap', writeHeapText(hp, { kind: 'heap_v2' }).text);
writeFileSync('/tmp/gperf-scratch/big.prof', writeCpuProfile(hp, {periodMicros: 10000}).bytes);
