/**
 * Number and text formatting, written to give the same strings as
 * ``jupyter_tfmem/views/format.py`` and ``views/text.py`` so the report reads
 * the same in the browser, in the panel and in the Markdown copy.
 *
 * Python's ``f"{x:.1f}"`` rounds the exact binary value of ``x`` and sends
 * exact halves to the even digit; ``Number.prototype.toFixed`` sends them up.
 * Byte counts divided by 1024 are often exact halves (1152 / 1024 = 1.125),
 * so ``toFixedHalfEven`` does the rounding on the exact decimal expansion.
 */

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Add one to the last digit of a string of decimal digits. */
function incrementDigits(digits: string): string {
  const out = digits.split('');
  let i = out.length - 1;
  while (i >= 0) {
    if (out[i] === '9') {
      out[i] = '0';
      i--;
    } else {
      out[i] = String(Number(out[i]) + 1);
      return out.join('');
    }
  }
  return '1' + out.join('');
}

/** ``x`` with ``decimals`` digits after the point, rounded like Python's format. */
export function toFixedHalfEven(x: number, decimals: number): string {
  const negative = x < 0 || Object.is(x, -0);
  const abs = Math.abs(x);
  if (abs >= 1e21) {
    return (negative ? '-' : '') + abs.toFixed(decimals);
  }
  // toFixed(100) is the exact decimal expansion of the double (for |x| < 1e21).
  const [intPart, frac] = abs.toFixed(100).split('.');
  const kept = intPart + frac.slice(0, decimals);
  const rest = frac.slice(decimals);
  let roundUp: boolean;
  if (rest[0] > '5') {
    roundUp = true;
  } else if (rest[0] < '5') {
    roundUp = false;
  } else if (/[1-9]/.test(rest.slice(1))) {
    roundUp = true;
  } else {
    roundUp = Number(kept[kept.length - 1]) % 2 === 1;
  }
  const digits = roundUp ? incrementDigits(kept) : kept;
  const whole = digits.slice(0, digits.length - decimals) || '0';
  const text = decimals > 0 ? `${whole}.${digits.slice(digits.length - decimals)}` : whole;
  return (negative ? '-' : '') + text;
}

/** Python's ``round(x)`` for display: nearest integer, halves to even. */
function roundHalfEvenInt(x: number): number {
  return Number(toFixedHalfEven(x, 0));
}

/** Binary units with three significant figures, e.g. ``1.23 GiB`` (``format_bytes``). */
export function formatBytes(n: number): string {
  let value = n;
  const sign = value < 0 ? '-' : '';
  value = Math.abs(value);
  let unit = 0;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) {
    return `${sign}${roundHalfEvenInt(value)} B`;
  }
  let text: string;
  if (value >= 100) {
    text = toFixedHalfEven(value, 0);
  } else if (value >= 10) {
    text = toFixedHalfEven(value, 1);
  } else {
    text = toFixedHalfEven(value, 2);
  }
  if (text === '1024') {
    return `${sign}1.00 ${BINARY_UNITS[Math.min(unit + 1, BINARY_UNITS.length - 1)]}`;
  }
  return `${sign}${text} ${BINARY_UNITS[unit]}`;
}

/** A fraction 0..1 as a percentage; tiny non-zero shares stay visible (``format_share``). */
export function formatShare(share: number): string {
  const pct = 100.0 * share;
  if (pct > 0 && pct < 0.1) {
    return '<0.1%';
  }
  return `${toFixedHalfEven(pct, 1)}%`;
}

/** Thousands separators that do not depend on the locale (``format_count``). */
export function formatCount(n: number): string {
  const value = Math.trunc(n);
  const sign = value < 0 ? '-' : '';
  return sign + String(Math.abs(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const CONTROL_RE = /[\x00-\x1f\x7f\u2028\u2029]+/g;
const MARKDOWN_SPECIAL_RE = /[\\`*[\]<>|~$&]/g;
// An underscore inside a word (dense_1) never starts emphasis in CommonMark.
const EDGE_UNDERSCORE_RE = /(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g;
const MARKDOWN_LEADING_RE = /^(?:[#+\-=!]|\d+(?=[.)](?:\s|$)))/;

/** One line of text: control characters become spaces (``clean_text``). */
export function cleanText(text: string): string {
  return text.replace(CONTROL_RE, ' ').trim();
}

/**
 * Text that renders literally in a Markdown paragraph or table cell
 * (``escape_markdown``): a layer named ``<img src=x onerror=...>`` or ``a|b``
 * can neither become HTML nor split a cell.
 */
export function escapeMarkdown(text: string): string {
  const escaped = cleanText(text)
    .replace(MARKDOWN_SPECIAL_RE, ch => `\\${ch}`)
    .replace(EDGE_UNDERSCORE_RE, '\\_');
  const match = MARKDOWN_LEADING_RE.exec(escaped);
  if (!match) {
    return escaped;
  }
  if (/\d/.test(match[0][0])) {
    const end = match[0].length;
    return `${escaped.slice(0, end)}\\${escaped.slice(end)}`;
  }
  return `\\${escaped}`;
}
