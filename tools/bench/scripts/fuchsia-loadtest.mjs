#!/usr/bin/env node
// Loopback load test of the fuchsia-sampler collector (build first: npx tsc -b packages/fuchsia-sampler).
// Usage: node tools/bench/scripts/fuchsia-loadtest.mjs [EVENTS] [CLIENTS] [channel1|channel2|socket] [tcp|unix] [pprof]
// With "pprof", profiles are encoded and written as gzipped pprof through @profkit/pprof.
// The load test is not exported by the published package (its tarball leaves it out): take it
// from the workspace build.
import { runLoadTest } from '../../../packages/fuchsia-sampler/dist/loadtest.js';

const [events = '1000000', clients = '4', transport = 'channel2', net = 'tcp', write = ''] = process.argv.slice(2);
let writeProfile;
if (write === 'pprof') {
  const { createRegistry } = await import('@profkit/core/node');
  const pprof = (await import('@profkit/pprof')).default;
  const registry = createRegistry([pprof]);
  writeProfile = (p, path) => registry.write(p, path, { validate: false });
}
const r = await runLoadTest({
  events: Number(events),
  clients: Number(clients),
  transport: transport === 'socket' ? 'socket' : transport === 'channel1' ? 1 : 2,
  unix: net === 'unix',
  writeProfile,
});
console.log(
  JSON.stringify({
    clients: r.clients,
    events: r.events,
    seconds: +r.seconds.toFixed(2),
    eventsPerSecond: Math.round(r.eventsPerSecond),
    cpuSeconds: +r.cpuSeconds.toFixed(2),
    eventsPerCpuSecond: Math.round(r.eventsPerCpuSecond),
    peakRssMiB: Math.round(r.peakRssMiB),
    profiles: r.profiles,
    errors: r.summary.errors.length,
    transport,
    net,
    write: write || 'none',
  }),
);
