import { PageTitle } from '../../lib/ui';

export function Invoices() {
  return <PageTitle>Invoices</PageTitle>;
}
