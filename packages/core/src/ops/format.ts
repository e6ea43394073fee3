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

/**
 * The units `sniffUnit` found, per unit type and unit name: a report formats a few values per
 * line, each sniffing its unit against the types in turn (UTF-8 encoding the name each time was
 * most of the formatting of a 181,000-line `top`). Few names occur (a profile's units and the
 * requested output units); the cache is emptied past SNIFFED_UNITS of them.
 */
const sniffed = new Map<UnitType, Map<string, Unit | undefined>>();
const SNIFFED_UNITS = 64;

function sniffUnit(ut: UnitType, unit: string): Unit | undefined {
  let known = sniffed.get(ut);
  if (!known) sniffed.set(ut, (known = new Map()));
  if (known.has(unit)) return known.get(unit);
  let u = unit.toLowerCase();
  // Go compares the UTF-8 byte length (so `μs` loses its `s` and is not recognized, as in pprof).
  if (utf8.encode(u).length > 2 && u.endsWith('s')) u = u.slice(0, -1);
  const found = ut.units.find((x) => x.aliases.includes(u));
  if (known.size >= SNIFFED_UNITS) known.clear();
  known.set(unit, found);
  return found;
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

const doubleView = new DataView(new ArrayBuffer(8));

/**
 * The exact decimal value of a finite double as (digits, point): value = 0.d1d2d3… × 10^point,
 * digits without leading zeros ('' for zero).
 */
function exactDecimal(x: number): { digits: string; point: number } {
  if (x === 0) return { digits: '', point: 0 };
  const view = doubleView;
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e2: number;
  if (expBits === 0) e2 = -1074;
  else {
    mant |= 1n << 52n;
    e2 = expBits - 1075;
  }
  let digits: string;
  let e10: number;
  if (e2 >= 0) {
    digits = (mant << BigInt(e2)).toString();
    e10 = 0;
  } else {
    // mant / 2^k = mant * 5^k / 10^k
    digits = (mant * 5n ** BigInt(-e2)).toString();
    e10 = e2;
  }
  const trimmed = digits.replace(/0+$/, '');
  return { digits: trimmed, point: digits.length + e10 };
}

/** Rounds decimal digits to `n` digits, half to even (Go's `decimal.Round`); trailing zeros trimmed. */
function roundDigits(d: { digits: string; point: number }, n: number): { digits: string; point: number } {
  if (n < 0) return { digits: '', point: d.point };
  if (d.digits.length <= n) return d;
  const head = d.digits.slice(0, n);
  const rest = d.digits.slice(n);
  const half = rest[0]! > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || (n > 0 && Number(head[n - 1]) % 2 === 1)));
  if (!half) {
    const t = head.replace(/0+$/, '');
    return { digits: t, point: t === '' ? 0 : d.point };
  }
  // Add one to the last kept digit, carrying.
  const a = head.split('').map(Number);
  let i = a.length - 1;
  while (i >= 0 && a[i] === 9) a[i--] = 0;
  if (i < 0) return { digits: '1', point: d.point + 1 };
  a[i]! += 1;
  return { digits: a.join('').replace(/0+$/, ''), point: d.point };
}

function digitAt(d: { digits: string }, i: number): string {
  return i >= 0 && i < d.digits.length ? d.digits[i]! : '0';
}

/** Go's `strconv.FormatFloat(x, 'f', prec, 64)` (exact, round half to even). */
export function goFormatF(x: number, prec: number): string {
  // `toFixed` rounds the exact value too, and differs from Go only on an exact tie (half up where Go
  // rounds half to even). A tie is x = j / 2^(prec + 1) with j odd: those, and values `toFixed`
  // prints in exponent form, take the exact path below (BigInt arithmetic, 20 times slower; a
  // report prints a few values per line, 9 MB of `peek` spent 0.4 s there).
  if (Math.abs(x) < 1e21 && prec <= 100) {
    const scaled = Math.abs(x) * 2 ** (prec + 1);
    if (!(Number.isInteger(scaled) && scaled % 2 === 1)) return (Object.is(x, -0) ? '-' : '') + x.toFixed(prec);
  }
  return goFormatFExact(x, prec);
}

/** `goFormatF` from the exact decimal expansion of `x` (every value; what the fast path must agree with). */
export function goFormatFExact(x: number, prec: number): string {
  const exact = exactDecimal(x);
  const d = roundDigits(exact, exact.point + prec);
  let s = '';
  if (d.point > 0) for (let i = 0; i < d.point; i++) s += digitAt(d, i);
  else s = '0';
  if (prec > 0) {
    s += '.';
    for (let i = 0; i < prec; i++) s += digitAt(d, d.point + i);
  }
  return (x < 0 || Object.is(x, -0) ? '-' : '') + s;
}

/** Go's `strconv.FormatFloat(x, 'g', prec, 64)` for prec >= 1 (exact, round half to even). */
export function goFormatG(x: number, prec: number): string {
  return formatG(x, prec, roundedDigits(x, prec) ?? roundDigits(exactDecimal(x), prec));
}

/** `goFormatG` from the exact decimal expansion of `x` (every value; what the fast path must agree with). */
export function goFormatGExact(x: number, prec: number): string {
  return formatG(x, prec, roundDigits(exactDecimal(x), prec));
}

/**
 * `x` rounded to `prec` significant digits as `roundDigits` gives them, from `toExponential`
 * (which rounds the exact value too, and differs from Go only on an exact tie, half up), or
 * undefined for the values that can be ties, and for 0 and non-finite ones: the exact path then.
 * Why: a report prints percentages below 1% this way, and the exact path (BigInt arithmetic) was
 * most of the formatting of a 181,000-line `top`.
 */
function roundedDigits(x: number, prec: number): { digits: string; point: number } | undefined {
  const a = Math.abs(x);
  // (toExponential takes 0 to 100 fraction digits: other precisions, which no report asks for, take the exact path.)
  if (a === 0 || !Number.isFinite(a) || !(prec >= 1 && prec <= 100)) return undefined;
  const text = a.toExponential(prec - 1);
  const e = text.indexOf('e');
  const exponent = Number(text.slice(e + 1));
  // A tie of a rounding unit 10^q needs 2a = odd x 10^q: a an integer (q >= 1) or a x 2^(1-q) an
  // integer (q <= 0). The exponent read may be one more than a's (a carry): testing a x 2^(2-q)
  // with its q covers both.
  const q = exponent - prec + 1;
  if (Number.isInteger(a * 2 ** Math.max(0, 2 - q))) return undefined;
  const digits = (text[0]! + text.slice(2, e)).replace(/0+$/, '');
  return { digits, point: exponent + 1 };
}

/** Go's 'g' format of `x` from its rounded digits. */
function formatG(x: number, prec: number, d: { digits: string; point: number }): string {
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (d.digits === '') return sign + '0';
  const nd = d.digits.length;
  let eprec = prec;
  if (eprec > nd && nd >= d.point) eprec = nd;
  const exp = d.point - 1;
  if (exp < -4 || exp >= eprec) {
    const p = Math.min(prec, nd);
    let s = d.digits[0]!;
    if (p > 1) s += '.' + d.digits.slice(1, p).padEnd(p - 1, '0');
    const e = Math.abs(exp);
    return sign + s + 'e' + (exp < 0 ? '-' : '+') + (e < 10 ? '0' : '') + e;
  }
  const p = prec > d.point ? nd : prec;
  const decimals = Math.max(p - d.point, 0);
  let s = '';
  if (d.point > 0) for (let i = 0; i < d.point; i++) s += digitAt(d, i);
  else s = '0';
  if (decimals > 0) {
    s += '.';
    for (let i = 0; i < decimals; i++) s += digitAt(d, d.point + i);
  }
  return sign + s;
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
  const fixed = goFormatF(v, 2);
  const sv = fixed.endsWith('.00') ? fixed.slice(0, -3) : fixed;
  if (sv === '0' || sv === '-0') return '0';
  return sv + u;
}

/** pprof's `-divide_by` applied to a printed value (`Report.formatValue`): `int64(float64(v) * ratio)` when ratio is positive and not 1. */
export function applyRatio(v: bigint, ratio: number): bigint {
  return ratio > 0 && ratio !== 1 ? BigInt(Math.trunc(Number(v) * ratio)) : v;
}

/**
 * pprof `measurement.Percentage`: `  100%` near 100, `%5.2f%%` from 1%, `%5.2g%%` below
 * (0 when the total is 0).
 */
export function formatPercentage(value: bigint | number, total: bigint | number): string {
  const t = Number(total);
  const ratio = t !== 0 ? Math.abs(Number(value) / t) * 100 : 0;
  if (ratio >= 99.95 && ratio <= 100.05) return '  100%';
  if (ratio >= 1) return goFormatF(ratio, 2).padStart(5, ' ') + '%';
  return goFormatG(ratio, 2).padStart(5, ' ') + '%';
}
