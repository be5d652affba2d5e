import { logger } from '../core/logger';
import type { PubSub } from '../core/pubsub';
import { KeyRetirement, keyRetirement } from '../modules/merchants';
import type { Services } from '../services';

/**
 * Follows the `api_key` changes a key roll announces (from any process, through the change listener): drops the
 * retired keys from this process's key cache, so HTTP refuses them at once rather than within the cache's 5 s, then
 * hands the retirement to `onRetired` (the WebSocket server cuts or times out the sockets of those keys).
 * Answers a function that stops following.
 */
export function followKeyRetirements(
  pubsub: PubSub,
  services: Services,
  onRetired: (r: KeyRetirement) => void,
): () => Promise<void> {
  const changes = pubsub.subscribe('api_key');
  const done = (async () => {
    for await (const change of changes) {
      const r = keyRetirement(change);
      if (!r) continue;
      try {
        services.merchants.forgetRetired(r);
        onRetired(r);
      } catch (err) {
        logger.error({ err }, 'applying a key retirement failed');
      }
    }
  })();
  return async () => {
    await changes.return();
    await done;
  };
}
