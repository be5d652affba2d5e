import crypto from 'node:crypto';
import type { Client_ } from '../harness/app';
import { ok } from '../subscriptions/helpers';

/** Shared by the entitlement tests. */

export const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

/** A new entitlement (201) with a fresh lookup_key unless given. */
export async function createEntitlement(c: Client_, body: Record<string, unknown> = {}) {
  return ok(c.post('/entitlements', { lookup_key: `pro_${rnd()}`, name: 'Pro features', ...body }), 201);
}

export async function link(c: Client_, entitlementId: string, productIds: string[]) {
  return ok(c.post(`/entitlements/${entitlementId}/products`, { product_ids: productIds }));
}

/** GET /subscriptions/customer/{id}/entitlements (200). */
export async function entitlementsOf(c: Client_, customerId: string) {
  return ok(c.get(`/subscriptions/customer/${customerId}/entitlements`));
}

/** The lookup keys a customer holds now, sorted. */
export async function keysOf(c: Client_, customerId: string): Promise<string[]> {
  return (await entitlementsOf(c, customerId)).entitlements.map((e: any) => e.lookup_key);
}

export const CUSTOMER_ENTITLEMENTS = `query($id: ID!) { customerEntitlements(customerId: $id) {
  customerId entitlements { entitlementId lookupKey name subscriptionIds expiresAt } } }`;

/** The GraphQL answer in REST's spelling, to compare the two transports field by field. */
export function gqlAsRest(data: any) {
  return {
    customer_id: data.customerId,
    entitlements: data.entitlements.map((e: any) => ({
      entitlement_id: e.entitlementId,
      lookup_key: e.lookupKey,
      name: e.name,
      subscription_ids: e.subscriptionIds,
      expires_at: e.expiresAt,
    })),
  };
}
