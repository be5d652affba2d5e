/**
 * One read per change, however many subscribers it reaches. The pub/sub hands every subscriber of a process the same
 * change object, so a read memoised on that object (and the reader's tenant) is done once per process and forgotten
 * with the change. The tenant is part of the key: a subscriber only ever shares a read done under its own merchant and
 * mode, never another's.
 */
const reads = new WeakMap<object, Map<string, Promise<unknown>>>();

export function readOncePerChange<T>(change: object, tenant: string, read: () => Promise<T>): Promise<T> {
  let byTenant = reads.get(change);
  if (!byTenant) reads.set(change, (byTenant = new Map()));
  let pending = byTenant.get(tenant) as Promise<T> | undefined;
  if (!pending) {
    pending = read();
    byTenant.set(tenant, pending);
  }
  return pending;
}
