/**
 * Merchants, their API keys and the current merchant of a request.
 * The module's public surface: other modules import it only through this file.
 */
export { currentMerchant, currentMerchantOf, primeMerchant } from './current-merchant';
export { retiredKeyChanges } from './key.catchup';
export { ApiKey, Merchant } from './merchant.entities';
export { MerchantResolver } from './merchant.resolver';
export { keyRetirement, MerchantService, retires } from './merchant.service';
export type { KeyRetirement } from './merchant.service';
export { merchantSql } from './merchant.store';
