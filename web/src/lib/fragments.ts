import { graphql } from '../gql';

/** The fields every paged list asks for to page on: one definition for the dashboard's lists. */
export const PageInfoParts = graphql(`
  fragment PageInfoParts on PageInfo {
    hasNextPage
    endCursor
  }
`);

/** What a plan change would cost, as the dashboard and the portal show it before it is confirmed. */
export const PlanChangePreviewParts = graphql(`
  fragment PlanChangePreviewParts on PlanChangePreview {
    proration {
      creditAmount
      debitAmount
      netAmount
      currency
    }
    taxAmount
    total
    currency
    newAmount
    taxBehavior
    effectiveAt
  }
`);
