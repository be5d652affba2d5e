import { PageTitle } from '../../lib/ui';

export function Developers() {
  return <PageTitle>Developers</PageTitle>;
}
