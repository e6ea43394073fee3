/**
 * pprof's number formatting (`internal/measurement`): unit scaling for values (`10ms`, `1.50s`,
 * `12.50MB`) and percentages.
 */

interface Unit {
  name: string;
  aliases: string[];
  factor: number;
}
interface UnitType {
  units: Unit[];
  dflt: Unit;
}

const UNIT_TYPES: UnitType[] = [
  {
    units: [
      { name: 'B', aliases: ['b', 'byte'], factor: 1 },
      { name: 'kB', aliases: ['kb', 'kbyte', 'kilobyte'], factor: 2 ** 10 },
      { name: 'MB', aliases: ['mb', 'mbyte', 'megabyte'], factor: 2 ** 20 },
      { name: 'GB', aliases: ['gb', 'gbyte', 'gigabyte'], factor: 2 ** 30 },
      { name: 'TB', aliases: ['tb', 'tbyte', 'terabyte'], factor: 2 ** 40 },
      { name: 'PB', aliases: ['pb', 'pbyte', 'petabyte'], factor: 2 ** 50 },
    ],
    dflt: { name: 'B', aliases: ['b', 'byte'], factor: 1 },
  },
  {
    units: [
      { name: 'ns', aliases: ['ns', 'nanosecond'], factor: 1 },
      { name: 'us', aliases: ['\u03bcs', 'us', 'microsecond'], factor: 1e3 },
      { name: 'ms', aliases: ['ms', 'millisecond'], factor: 1e6 },
      { name: 's', aliases: ['s', 'sec', 'second'], factor: 1e9 },
      { name: 'hrs', aliases: ['hour', 'hr'], factor: 3600e9 },
    ],
    dflt: { name: 's', aliases: [], factor: 1e9 },
  },
  {
    units: [
      { name: 'n*GCU', aliases: ['nanogcu'], factor: 1e-9 },
      { name: 'u*GCU', aliases: ['microgcu'], factor: 1e-6 },
      { name: 'm*GCU', aliases: ['milligcu'], factor: 1e-3 },
      { name: 'GCU', aliases: ['gcu'], factor: 1 },
      { name: 'k*GCU', aliases: ['kilogcu'], factor: 1e3 },
      { name: 'M*GCU', aliases: ['megagcu'], factor: 1e6 },
      { name: 'G*GCU', aliases: ['gigagcu'], factor: 1e9 },
      { name: 'T*GCU', aliases: ['teragcu'], factor: 1e12 },
      { name: 'P*GCU', aliases: ['petagcu'], factor: 1e15 },
    ],
    dflt: { name: 'GCU', aliases: [], factor: 1 },
  },
];

const utf8 = new TextEncoder();

function sniffUnit(ut: UnitType, unit: string): Unit | undefined {
  let u = unit.toLowerCase();
  // Go compares the UTF-8 byte length (so `μs` loses its `s` and is not recognized, as in pprof).
  if (utf8.encode(u).length > 2 && u.endsWith('s')) u = u.slice(0, -1);
  return ut.units.find((x) => x.aliases.includes(u));
}

/** pprof `measurement.Scale(value, fromUnit, toUnit)`; `toUnit` may be `minimum`/`auto`. */
export function scaleMeasurement(value: number, fromUnit: string, toUnit: string): [number, string] {
  if (value < 0) {
    const [v, u] = scaleMeasurement(-value, fromUnit, toUnit);
    return [-v, u];
  }
  for (const ut of UNIT_TYPES) {
    const from = sniffUnit(ut, fromUnit);
    if (!from) continue;
    const v = value * from.factor;
    if (toUnit === 'minimum' || toUnit === 'auto') {
      let f = 0;
      let name = '';
      for (const u of ut.units) {
        if (u.factor >= f && v / u.factor >= 1) {
          f = u.factor;
          name = u.name;
        }
      }
      if (f !== 0) return [v / f, name];
      return [v / ut.dflt.factor, ut.dflt.name];
    }
    const to = sniffUnit(ut, toUnit);
    if (!to) return [v / ut.dflt.factor, ut.dflt.name];
    return [v / to.factor, to.name];
  }
  switch (toUnit) {
    case 'count':
    case 'sample':
    case 'unit':
    case 'minimum':
    case 'auto':
      return [value, ''];
    default:
      return [value, toUnit];
  }
}

/** Go's `fmt.Sprintf("%.2f", x)` (round half to even on exact ties, unlike `toFixed`). */
export function goFixed2(x: number): string {
  const j = x * 8;
  if (Number.isInteger(j) && Math.abs(j) % 2 === 1 && Math.abs(x) < 2 ** 40) {
    // x*100 is exactly k + 0.5: Go rounds to the even neighbour.
    let n = Math.floor(Math.abs(x) * 100);
    if (n % 2 === 1) n += 1;
    const frac = String(n % 100).padStart(2, '0');
    return (x < 0 ? '-' : '') + String(Math.floor(n / 100)) + '.' + frac;
  }
  return x.toFixed(2);
}

/** Go's `%.<prec>g` of a non-negative finite number. */
export function goG(x: number, prec: number): string {
  if (x === 0) return '0';
  const [mant, expStr] = x.toExponential(prec - 1).split('e') as [string, string];
  const exp = Number(expStr);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp < -4 || exp >= prec) {
    const e = Math.abs(exp);
    return trim(mant) + 'e' + (exp < 0 ? '-' : '+') + (e < 10 ? '0' : '') + e;
  }
  return trim(x.toFixed(Math.max(0, prec - 1 - exp)));
}

/**
 * A sample value as pprof prints it in reports (`measurement.ScaledLabel(value, unit,
 * "minimum")`): scaled to the largest unit of its kind that keeps it >= 1, two decimals with a
 * trailing `.00` removed (`10ms`, `1.50s`, `12.50MB`, `512B`); counts and units pprof does not
 * know print the bare number (`1234`).
 */
export function formatValue(value: bigint | number, unit: string, toUnit = 'minimum'): string {
  if (unit === '' && toUnit === 'count') return String(value);
  const [v, u] = scaleMeasurement(Number(value), unit, toUnit);
  const sv = goFixed2(v).replace(/\.00$/, '');
  if (sv === '0' || sv === '-0') return '0';
  return sv + u;
}

/**
 * pprof `measurement.Percentage`: `  100%` near 100, `%5.2f%%` from 1%, `%5.2g%%` below
 * (0 when the total is 0).
 */
export function formatPercentage(value: bigint | number, total: bigint | number): string {
  const t = Number(total);
  const ratio = t !== 0 ? Math.abs(Number(value) / t) * 100 : 0;
  if (ratio >= 99.95 && ratio <= 100.05) return '  100%';
  if (ratio >= 1) return goFixed2(ratio).padStart(5, ' ') + '%';
  return goG(ratio, 2).padStart(5, ' ') + '%';
}
