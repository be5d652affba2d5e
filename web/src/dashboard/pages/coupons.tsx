import { PageTitle } from '../../lib/ui';

export function Coupons() {
  return <PageTitle>Coupons</PageTitle>;
}
