import { invalid } from '../../core/errors';
import { pathDeeperThan } from '../../core/input-limits';

/**
 * Input rules of the presentation layer beyond what the input types' validators say. Resolve's attributes follow the
 * experiments module's rule (experiment.targeting.ts), the one that reads them.
 */

/** Printable ASCII without spaces: keys appear in client code and URLs (`$rc_monthly`, `default`, `annual-2026`). */
const LOOKUP_KEY = /^[\x21-\x7e]{1,200}$/;

export function validateLookupKey(key: string, param = 'lookup_key'): string {
  if (!LOOKUP_KEY.test(key))
    throw invalid(param, `${param} must be 1 to 200 printable ASCII characters without spaces.`);
  return key;
}

/** A paywall config: a JSON object of at most 16 KiB serialized (UTF-8 bytes) and 16 levels deep (itself is level 1). */
export const MAX_CONFIG_BYTES = 16 * 1024;
export const MAX_CONFIG_DEPTH = 16;

/**
 * Checks a paywall config. The depth is checked first, without recursion (src/core/input-limits.ts), so the
 * serialization that measures the size cannot be made to recurse deeply. Strings must be well-formed UTF-16: a lone
 * surrogate is refused here rather than by PostgreSQL's jsonb parser.
 */
export function validateConfig(config: unknown, param = 'config'): Record<string, unknown> {
  if (config == null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw invalid(param, `${param} must be a JSON object.`);
  if (pathDeeperThan(config, MAX_CONFIG_DEPTH)) {
    throw invalid(param, `${param} may nest objects and arrays at most ${MAX_CONFIG_DEPTH} levels deep.`);
  }
  const json = JSON.stringify(config);
  if (Buffer.byteLength(json, 'utf8') > MAX_CONFIG_BYTES) {
    throw invalid(
      param,
      `${param} must be at most ${MAX_CONFIG_BYTES} bytes as JSON (16 KiB); it is ${Buffer.byteLength(json, 'utf8')}.`,
    );
  }
  if (hasLoneSurrogate(config))
    throw invalid(param, `${param} holds a string that is not valid Unicode (a lone surrogate).`);
  return config as Record<string, unknown>;
}

/** A UTF-16 surrogate without its pair: JSON can carry one (`"\\ud800"`), PostgreSQL's jsonb refuses it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether any string or key in `value` holds a lone surrogate (iterative: no nesting can exhaust the stack). */
export function hasLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return true;
    } else if (Array.isArray(v)) {
      stack.push(...v);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return true;
        stack.push(x);
      }
    }
  }
  return false;
}
