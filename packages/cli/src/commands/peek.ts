import type { CliCommand } from '../types.js';
import { TREE_OPTIONS, runTree } from './tree.js';

export const peek: CliCommand = {
  name: 'peek',
  summary: 'Callers and callees of the functions matching a regular expression, like `go tool pprof -peek`',
  usage: [
    'profkit peek FILE RE [--sample-type T] [--focus RE] [--ignore RE] [--by function|file|line]',
    '',
    'The `tree` report restricted to the entries whose name matches RE (searched anywhere, Go/RE2',
    'spelling such as (?i) accepted), untrimmed as in pprof. Exits 2 when nothing matches.',
    '',
    'Examples:',
    '  profkit peek cpu.pb.gz "runtime\\.mallocgc"',
    '  profkit peek Rprof.out "^fib$" --sample-type time',
    '  profkit peek cpu.pb.gz "(?i)json" --json',
  ].join('\n'),
  options: {
    ...TREE_OPTIONS,
    nodecount: { type: 'string', short: 'n', valueName: 'N', description: 'consider at most N entries (default all)' },
  },
  positionals: 2,
  json: true,
  run: (ctx) => runTree(ctx, 'peek', ctx.positionals[0]!, ctx.positionals[1]!),
};
