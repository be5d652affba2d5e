import type { DocumentNode, GraphQLSchema } from 'graphql';
import { GraphQLError } from 'graphql';
import { ComplexityEstimator, fieldExtensionsEstimator, getComplexity } from 'graphql-query-complexity';

/**
 * What one client-written GraphQL operation may cost (docs/operations.md, "Fair sharing"). Every field costs 1 plus
 * what it selects; a connection's selection counts once per item it may answer (`first`, default 20). Expensive fields
 * declare their own cost on the resolver (type-graphql's `complexity`): a PDF, analytics by the buckets their window
 * spans, usage by the events reported. Over MAX_COST the operation is refused before it runs (400 `query_too_complex`).
 * The REST shim's own operations are fixed and not counted.
 */
export const MAX_COST = 20_000;

/** Half the limit and one more: a request renders one PDF at most, however it is asked (aliases, lists). */
export const PDF_COST = MAX_COST / 2 + 1;

/** A connection asked without `first` answers this many items (src/core/pagination.ts's default). */
const DEFAULT_PAGE = 20;
const DAY_MS = 86_400_000;
/** Window lengths as the analytics resolvers default and bound them (src/modules/analytics/analytics.window.ts). */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 1096;

/** Days in an analytics window from its `from`/`to` arguments (the resolver validates them; here a guess suffices). */
function windowDays(args: Record<string, unknown>, defaultDays = DEFAULT_DAYS): number {
  const at = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : v instanceof Date ? v.getTime() : NaN);
  const to = at(args.to);
  const from = at(args.from);
  const days = Number.isFinite(from) ? ((Number.isFinite(to) ? to : Date.now()) - from) / DAY_MS : defaultDays;
  return Math.min(MAX_DAYS, Math.max(1, Math.ceil(days)));
}

const isWeekly = (v: unknown) => String(v ?? '').toLowerCase() === 'week';

/** An analytics answer over a window: 100, and 20 a bucket (week or month) of its series. */
export const analyticsCost =
  (bucketArg = 'interval', defaultDays = DEFAULT_DAYS): ComplexityEstimator =>
  ({ args, childComplexity }) => {
    const days = windowDays(args, defaultDays);
    return 100 + 20 * Math.ceil(days / (isWeekly(args[bucketArg]) ? 7 : 30)) + childComplexity;
  };

/** Retention cohorts: a row per cohort and a cell per later period, so the cost grows with the square of the buckets. */
export const cohortsCost: ComplexityEstimator = ({ args, childComplexity }) => {
  const buckets = Math.ceil(windowDays(args, 365) / (isWeekly(args.granularity) ? 7 : 30));
  return 100 + Math.ceil((buckets * (buckets + 1)) / 2) + childComplexity;
};

/** Usage ingestion: 10 an event, so one full batch of 1,000 fits a request and two do not. */
export const usageCost: ComplexityEstimator = ({ args, childComplexity }) => {
  const events = (args.input as { events?: unknown[] } | undefined)?.events;
  return 10 * (Array.isArray(events) ? events.length : 1) + childComplexity;
};

/** A field with a `first` argument answers up to that many items, each costing what it selects. */
const connectionEstimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (!field.args.some((a) => a.name === 'first')) return 1 + childComplexity;
  const first = typeof args.first === 'number' && args.first >= 0 ? args.first : DEFAULT_PAGE;
  return 1 + childComplexity * Math.max(1, first);
};

const estimators = [fieldExtensionsEstimator(), connectionEstimator];

/** The operation's cost; variables as sent (coerced here as graphql-js would). */
function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): number {
  return getComplexity({
    schema,
    query: document,
    operationName: operationName ?? undefined,
    variables: variables ?? {},
    estimators,
  });
}

/** 400 `query_too_complex` for an operation over MAX_COST; null when it fits. */
export function operationCostError(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): GraphQLError | null {
  let cost: number;
  try {
    cost = operationCost(schema, document, operationName, variables);
  } catch {
    return null; // variables that do not coerce: execution refuses them with the usual error, naming the field
  }
  if (cost <= MAX_COST) return null;
  return new GraphQLError(
    `Query Cost limit of ${MAX_COST} exceeded, found ${cost}. A PDF costs ${PDF_COST} (one per request); connections count each item of \`first\`.`,
    { extensions: { code: 'query_too_complex', http: { status: 400 } } },
  );
}
