import { PageTitle } from '../../lib/ui';

export function Payments() {
  return <PageTitle>Payments</PageTitle>;
}
