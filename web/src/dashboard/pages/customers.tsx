import { PageTitle } from '../../lib/ui';

export function Customers() {
  return <PageTitle>Customers</PageTitle>;
}
