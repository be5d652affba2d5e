/**
 * The merchant's customers.
 * The module's public surface: other modules import it only through this file.
 */
export { Customer } from './customer.entities';
export { CurrencyAmount, CustomerResolver } from './customer.resolver';
export {
  CustomerService,
  customersById,
  normaliseEmail,
  purchaseCustomer,
  validateCustomerDetails,
} from './customer.service';
export type { PurchaseCustomerInput } from './customer.service';
export { CreateCustomerInput, UpdateCustomerInput } from './customer.inputs';
export { customerByIdCte, customerSql, customerUpsertCte } from './customer.store';
export type { CustomerDetails } from './customer.store';
