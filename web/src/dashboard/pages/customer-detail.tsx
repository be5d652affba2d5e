import { PageTitle } from '../../lib/ui';

export function CustomerDetail() {
  return <PageTitle>CustomerDetail</PageTitle>;
}
