import { graphql } from '../../../gql';
import type { GrowthOfferingsQuery } from '../../../gql/graphql';

/** Offerings with their packages in position order, each package's products, plans and default prices. */
export const OfferingsQuery = graphql(`
  query GrowthOfferings($first: Int!, $after: String) {
    offerings(first: $first, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          name
          lookupKey
          description
          isCurrent
          packages {
            id
            lookupKey
            name
            description
            position
            products {
              id
              name
              description
              plans {
                id
                name
                billingFrequency
                billingInterval
                trialPeriodDays
                defaultPrice {
                  id
                  amount
                  currency
                }
              }
            }
          }
        }
      }
    }
  }
`);

export type GrowthOffering = GrowthOfferingsQuery['offerings']['edges'][number]['node'];
export type GrowthPackage = GrowthOffering['packages'][number];
