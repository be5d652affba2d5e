/**
 * The merchant's customers.
 * The module's public surface: other modules import it only through this file.
 */
export { Customer } from './customer.entities';
export { CurrencyAmount, CustomerResolver } from './customer.resolver';
export { CustomerService, normaliseEmail, validateCustomerDetails } from './customer.service';
export { customerSql, customerUpsertCte } from './customer.store';
export type { CustomerDetails } from './customer.store';
