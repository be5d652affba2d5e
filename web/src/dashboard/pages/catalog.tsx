import { PageTitle } from '../../lib/ui';

export function Catalog() {
  return <PageTitle>Catalog</PageTitle>;
}
