/**
 * Interop with google/pprof itself: a Go program built on google/pprof's `profile` package
 * (Debian's golang-github-google-pprof-dev) generates two random profiles, applies the Go
 * operations (Merge, Compact, Prune, RemoveUninteresting, PruneFrom, FilterSamplesByName,
 * Scale, Normalize, the -diff_base recipe, Aggregate) and prints each result with
 * `Profile.String()`; we rebuild the same inputs from its JSON, apply our operations and
 * compare the dumps byte for byte. `go tool pprof -top` is compared with `formatTopTable`.
 * Skips, naming what is missing, without `go` or the pprof Go sources.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haveTool } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ProfileBuilder,
  aggregateBy,
  compact,
  diff,
  filterSamples,
  formatPprofDump,
  formatTopTable,
  merge,
  normalize,
  prune,
  pruneFrom,
  removeUninteresting,
  scale,
  topTable,
  type LabelInput,
  type Profile,
  type TopOptions,
} from '../src/node/index.js';

const PPROF_SRC = '/usr/share/gocode/src/github.com/google/pprof/profile';
const haveGo = haveTool('go', 'golang-go', 'ops-interop-go');
const havePprof = existsSync(PPROF_SRC);
if (haveGo && !havePprof) console.warn(`ops-interop-go: skipped, ${PPROF_SRC} is absent (apt-get install -y golang-github-google-pprof-dev)`);

const GO_MAIN = String.raw`package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/google/pprof/profile"
)

func gen(seed int64, starts []uint64, time int64) *profile.Profile {
	r := rand.New(rand.NewSource(seed))
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        int64(1000 * (seed%3 + 1)),
		TimeNanos:     time,
		DurationNanos: int64(seed) * 1e9,
		Comments:      []string{"shared", fmt.Sprintf("c%d", seed)},
		DropFrames:    "malloc|.*alloc.*|f1[0-3]",
		KeepFrames:    "f12",
	}
	if seed%2 == 0 {
		p.DefaultSampleType = "cpu"
	}
	p.Mapping = []*profile.Mapping{
		{ID: 1, Start: starts[0], Limit: starts[0] + 0x400000, File: "/bin/main", BuildID: "mainbuild", HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true},
		{ID: 2, Start: starts[1], Limit: starts[1] + 0x100000, Offset: 0x1000, File: "/lib/libx.so", HasFunctions: true},
		{ID: 3, Start: starts[2], Limit: starts[2] + 0x1000},
	}
	if seed%2 == 1 {
		p.Mapping = append(p.Mapping, &profile.Mapping{ID: 4, Start: 0x9000000, Limit: 0x9100000, File: fmt.Sprintf("/lib/only%d.so", seed)})
	}
	names := []string{"main", "malloc", "calloc_impl", ".dotted", "ns::(anonymous namespace)::fn(int)", "op::operator()(int)"}
	for i := 0; i < 24; i++ {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	for i, k := range r.Perm(len(names)) {
		n := names[k]
		p.Function = append(p.Function, &profile.Function{ID: uint64(i + 1), Name: n, SystemName: "sys_" + n, Filename: fmt.Sprintf("src/./file%d.c", k%7), StartLine: int64(k % 5)})
	}
	for i := 0; i < 90; i++ {
		m := p.Mapping[r.Intn(len(p.Mapping))]
		l := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: m.Start + uint64(16*r.Intn(40))}
		if r.Intn(10) != 0 {
			k := 1 + r.Intn(3)
			for j := 0; j < k; j++ {
				l.Line = append(l.Line, profile.Line{Function: p.Function[r.Intn(len(p.Function))], Line: int64(1 + r.Intn(3))})
			}
		}
		p.Location = append(p.Location, l)
	}
	for i := 0; i < 400; i++ {
		s := &profile.Sample{Value: []int64{int64(r.Intn(4)), int64(r.Intn(5)) * 1000003}}
		if r.Intn(20) == 0 {
			s.Value[1] = -s.Value[1]
		}
		d := 1 + r.Intn(8)
		for j := 0; j < d; j++ {
			s.Location = append(s.Location, p.Location[r.Intn(len(p.Location))])
		}
		switch r.Intn(6) {
		case 0:
			s.Label = map[string][]string{"thread": {fmt.Sprintf("t%d", r.Intn(3))}}
		case 1:
			s.NumLabel = map[string][]int64{"bytes": {int64(r.Intn(3))}}
			s.NumUnit = map[string][]string{"bytes": {"bytes"}}
		case 2:
			s.Label = map[string][]string{"thread": {fmt.Sprintf("t%d", r.Intn(2)), "x"}, "zone": {"a"}}
		case 3:
			// (a zero numeric label without unit would not survive Go's Copy, a proto round trip)
			s.NumLabel = map[string][]int64{"n": {int64(1 + r.Intn(2)), 7}}
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		panic(err)
	}
	return p
}

type jLine struct{ Fn, Line int64 }
type jLoc struct {
	Mapping uint64
	Address uint64
	Lines   []jLine
}
type jSample struct {
	Locs      []uint64
	Values    []int64
	Labels    map[string][]string
	NumLabels map[string][]int64
	NumUnits  map[string][]string
}
type jProfile struct {
	Period, Time, Duration int64
	Comments               []string
	Drop, Keep, Default    string
	Mappings               []*profile.Mapping
	Functions              []*profile.Function
	Locations              map[uint64]jLoc
	Samples                []jSample
}

func toJSON(p *profile.Profile) jProfile {
	j := jProfile{Period: p.Period, Time: p.TimeNanos, Duration: p.DurationNanos, Comments: p.Comments, Drop: p.DropFrames, Keep: p.KeepFrames, Default: p.DefaultSampleType, Functions: p.Function, Locations: map[uint64]jLoc{}}
	for _, m := range p.Mapping {
		j.Mappings = append(j.Mappings, m)
	}
	for _, l := range p.Location {
		jl := jLoc{Address: l.Address}
		if l.Mapping != nil {
			jl.Mapping = l.Mapping.ID
		}
		for _, ln := range l.Line {
			jl.Lines = append(jl.Lines, jLine{int64(ln.Function.ID), ln.Line})
		}
		j.Locations[l.ID] = jl
	}
	for _, s := range p.Sample {
		js := jSample{Values: s.Value, Labels: s.Label, NumLabels: s.NumLabel, NumUnits: s.NumUnit}
		for _, l := range s.Location {
			js.Locs = append(js.Locs, l.ID)
		}
		j.Samples = append(j.Samples, js)
	}
	return j
}

func main() {
	out := os.Args[1]
	seed, err := strconv.Atoi(os.Args[2])
	must(err)
	a := gen(int64(seed), []uint64{0x400000, 0x7f000000, 0x1000}, 5000)
	b := gen(int64(seed+1), []uint64{0x800000, 0x7e000000, 0x3000}, 7000)
	inputs, _ := json.Marshal(map[string]jProfile{"a": toJSON(a), "b": toJSON(b)})
	must(os.WriteFile(filepath.Join(out, "inputs.json"), inputs, 0o644))
	f, err := os.Create(filepath.Join(out, "a.pb.gz"))
	must(err)
	must(a.Write(f))
	f.Close()
	res := map[string]string{}
	m, err := profile.Merge([]*profile.Profile{a, b})
	must(err)
	res["merge"] = m.String()
	res["compact"] = a.Compact().String()
	c := a.Copy()
	c.RemoveUninteresting()
	res["removeUninteresting"] = c.Compact().String()
	c = a.Copy()
	c.Prune(regexp.MustCompile("^(f1.*|main)$"), nil)
	res["prune"] = c.Compact().String()
	c = a.Copy()
	c.PruneFrom(regexp.MustCompile("f2"))
	res["pruneFrom"] = c.Compact().String()
	c = a.Copy()
	c.FilterSamplesByName(regexp.MustCompile("f2"), regexp.MustCompile("f7"), regexp.MustCompile("f3|libx"), nil)
	res["filter"] = c.Compact().String()
	c = a.Copy()
	c.FilterSamplesByName(nil, nil, nil, regexp.MustCompile("f1|main"))
	res["show"] = c.Compact().String()
	c = a.Copy()
	c.Scale(0.37)
	res["scale"] = c.Compact().String()
	c = a.Copy()
	must(c.Normalize(b))
	res["normalize"] = c.Compact().String()
	base := b.Copy()
	base.SetLabel("pprof::base", []string{"true"})
	base.Scale(-1)
	m, err = profile.Merge([]*profile.Profile{a, base})
	must(err)
	res["diff"] = m.String()
	base = b.Copy()
	base.Scale(-1)
	m, err = profile.Merge([]*profile.Profile{a, base})
	must(err)
	res["diffNoLabel"] = m.String()
	c = a.Copy()
	must(c.Aggregate(true, true, false, false, false))
	res["aggFunction"] = c.Compact().String()
	c = a.Copy()
	must(c.Aggregate(false, true, true, true, false))
	res["aggLineNoInline"] = c.Compact().String()
	results, _ := json.Marshal(res)
	must(os.WriteFile(filepath.Join(out, "results.json"), results, 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
`;

interface JProfile {
  Period: number;
  Time: number;
  Duration: number;
  Comments: string[];
  Drop: string;
  Keep: string;
  Default: string;
  Mappings: { ID: number; Start: number; Limit: number; Offset: number; File: string; BuildID: string; HasFunctions: boolean; HasFilenames: boolean; HasLineNumbers: boolean; HasInlineFrames: boolean }[];
  Functions: { ID: number; Name: string; SystemName: string; Filename: string; StartLine: number }[];
  Locations: Record<string, { Mapping: number; Address: number; Lines: { Fn: number; Line: number }[] | null }>;
  Samples: { Locs: number[]; Values: number[]; Labels: Record<string, string[]> | null; NumLabels: Record<string, number[]> | null; NumUnits: Record<string, string[]> | null }[];
}

/** Builds the Go profile in our model (Go ids are remembered only to resolve references). */
function fromJSON(j: JProfile): Profile {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    facts: {
      period_type: { type: 'cpu', unit: 'nanoseconds' },
      period: BigInt(j.Period),
      time_nanos: BigInt(j.Time),
      duration_nanos: BigInt(j.Duration),
      comments: j.Comments,
      drop_frames: j.Drop,
      keep_frames: j.Keep,
      default_sample_type: j.Default,
    },
  });
  const mapIds = new Map<number, number>();
  for (const m of j.Mappings) {
    mapIds.set(m.ID, b.internMapping({
      memoryStart: m.Start, memoryLimit: m.Limit, fileOffset: m.Offset ?? 0, filename: m.File ?? '', buildId: m.BuildID ?? '',
      hasFunctions: m.HasFunctions, hasFilenames: m.HasFilenames, hasLineNumbers: m.HasLineNumbers, hasInlineFrames: m.HasInlineFrames,
    }));
  }
  const fnIds = new Map<number, number>();
  for (const f of j.Functions) fnIds.set(f.ID, b.internFunction({ name: f.Name, systemName: f.SystemName, filename: f.Filename, startLine: f.StartLine ?? 0 }));
  const locIds = new Map<number, number>();
  for (const [id, l] of Object.entries(j.Locations).sort((x, y) => Number(x[0]) - Number(y[0]))) {
    const lines = l.Lines ?? [];
    locIds.set(Number(id), b.addLocation({
      functionId: lines[0] ? fnIds.get(lines[0].Fn)! : 0,
      line: lines[0]?.Line ?? 0,
      address: l.Address,
      mappingId: l.Mapping ? mapIds.get(l.Mapping)! : 0,
      inlinedInto: lines.slice(1).map((ln) => ({ functionId: fnIds.get(ln.Fn)!, line: ln.Line })),
    }));
  }
  for (const s of j.Samples) {
    const labels: LabelInput[] = [];
    for (const [k, vs] of Object.entries(s.Labels ?? {})) for (const v of vs) labels.push({ key: k, str: v });
    for (const [k, vs] of Object.entries(s.NumLabels ?? {})) vs.forEach((v, i) => labels.push({ key: k, num: v, unit: s.NumUnits?.[k]?.[i] ?? '' }));
    b.addSample(s.Locs.map((id) => locIds.get(id)!), s.Values, labels);
  }
  return b.build();
}

/** The Debian google/pprof prints `file:line` (no column) and no `Doc:` line; our dump, reduced. */
function goStyle(dump: string): string {
  return dump.replace(/(:\d+):\d+ s=/g, '$1 s=');
}

const SEEDS = [1, 5, 11];

describe.skipIf(!haveGo || !havePprof)('operations agree with google/pprof (Go)', () => {
  let dir = '';
  const runs = new Map<number, { dir: string; A: Profile; B: Profile; results: Record<string, string> }>();
  const goEnv = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: join(tmpdir(), 'profkit-go-cache'), TZ: 'UTC', GOFLAGS: '' };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'profkit-ops-go-'));
    writeFileSync(join(dir, 'main.go'), GO_MAIN);
    const bin = join(dir, 'opsref');
    execFileSync('go', ['build', '-o', bin, join(dir, 'main.go')], { env: goEnv, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    for (const seed of SEEDS) {
      const out = join(dir, String(seed));
      mkdirSync(out);
      execFileSync(bin, [out, String(seed)], { env: goEnv, stdio: ['ignore', 'ignore', 'pipe'] });
      const inputs = JSON.parse(readFileSync(join(out, 'inputs.json'), 'utf8')) as Record<'a' | 'b', JProfile>;
      const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Record<string, string>;
      runs.set(seed, { dir: out, A: fromJSON(inputs.a), B: fromJSON(inputs.b), results });
    }
  }, 180_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ours: Record<string, (A: Profile, B: Profile) => Profile> = {
    merge: (A, B) => merge([A, B]),
    compact: (A) => compact(A),
    removeUninteresting: (A) => compact(removeUninteresting(A)),
    prune: (A) => compact(prune(A, { dropFrames: 'f1.*|main' })),
    pruneFrom: (A) => compact(pruneFrom(A, 'f2')),
    filter: (A) => compact(filterSamples(A, { focus: 'f2', ignore: 'f7', hide: 'f3|libx' })),
    show: (A) => compact(filterSamples(A, { show: 'f1|main' })),
    scale: (A) => compact(scale(A, 0.37)),
    normalize: (A, B) => compact(normalize(A, B)),
    diff: (A, B) => diff(B, A),
    diffNoLabel: (A, B) => diff(B, A, { labelBase: false }),
    aggFunction: (A) => compact(aggregateBy(A, 'function')),
    aggLineNoInline: (A) => compact(aggregateBy(A, 'line', { inline: false })),
  };
  for (const seed of SEEDS) {
    for (const [name, op] of Object.entries(ours)) {
      it(`seed ${seed}: ${name} dumps exactly like the Go result`, () => {
        const run = runs.get(seed)!;
        expect(run.results[name]).toBeDefined();
        expect(goStyle(formatPprofDump(op(run.A, run.B)))).toBe(run.results[name]);
      });
    }
  }

  const topCases: [string[], TopOptions][] = [
    [[], {}],
    [['-cum'], { cum: true }],
    [['-files', '-nodefraction=0'], { by: 'file', nodeFraction: 0 }],
    [['-lines', '-noinlines'], { by: 'line', inline: false }],
    [['-sample_index=0', '-edgefraction=0'], { sampleTypeIndex: 0, edgeFraction: 0 }],
  ];
  for (const seed of SEEDS) {
    for (const [flags, opts] of topCases) {
      it(`seed ${seed}: topTable matches go tool pprof -top ${flags.join(' ')}`, () => {
        const run = runs.get(seed)!;
        const out = execFileSync('go', ['tool', 'pprof', '-top', ...flags, join(run.dir, 'a.pb.gz')], {
          env: { ...goEnv, PPROF_TMPDIR: run.dir },
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        const lines = out.split('\n');
        const go = lines.slice(lines.findIndex((l) => l.includes('flat  flat%'))).join('\n');
        // go tool pprof prunes every profile it loads.
        expect(formatTopTable(topTable(removeUninteresting(run.A), opts))).toBe(go);
      });
    }
  }
});
