/**
 * What the preview reads from a paywall's free-form config (docs/growth.md): every key is optional and anything else
 * is kept but not drawn. A feature given as a string is in every package; as {name, packages} only in the packages
 * whose lookup keys it lists.
 */
export interface PaywallLook {
  title: string;
  subtitle?: string;
  cta: string;
  /** Lookup key of the package to highlight. */
  highlight?: string;
  primary?: string;
  badge?: string;
  features: { name: string; packages: string[] | null }[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);

export function lookOf(config: Record<string, unknown>): PaywallLook {
  const colors = (config.colors && typeof config.colors === 'object' ? config.colors : {}) as Record<string, unknown>;
  const badge = config.badge as { text?: unknown; show?: unknown } | string | undefined;
  const features = Array.isArray(config.features) ? config.features : [];
  return {
    title: str(config.title) ?? 'Choose your plan',
    subtitle: str(config.subtitle),
    cta: str(config.cta) ?? str(config.callToAction) ?? 'Continue',
    highlight: str(config.highlight),
    primary: str(colors.primary),
    badge: typeof badge === 'string' ? badge : badge && badge.show !== false ? str(badge.text) : undefined,
    features: features.flatMap((f) => {
      if (typeof f === 'string') return [{ name: f, packages: null }];
      if (f && typeof f === 'object') {
        const o = f as Record<string, unknown>;
        const name = str(o.name) ?? str(o.title);
        if (!name) return [];
        const pk = Array.isArray(o.packages) ? o.packages.filter((x): x is string => typeof x === 'string') : null;
        return [{ name, packages: pk }];
      }
      return [];
    }),
  };
}

/** The config text as an object, or why it is not one. */
export function parseConfig(text: string): { config: Record<string, unknown> } | { error: string } {
  if (!text.trim()) return { config: {} };
  try {
    const v: unknown = JSON.parse(text);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The config must be a JSON object ({ … }).' };
    return { config: v as Record<string, unknown> };
  } catch (e) {
    return { error: `The config is not valid JSON: ${(e as Error).message}` };
  }
}
