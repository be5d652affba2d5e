/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n": typeof types.DashboardMerchantDocument,
    "\n  query ChangePlanOptions($productId: ID!) {\n    product(id: $productId) {\n      id\n      plans {\n        id\n        name\n        billingFrequency\n        billingInterval\n        prices {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n": typeof types.ChangePlanOptionsDocument,
    "\n  query ChangePlanPreview($id: ID!, $input: ChangePlanInput!) {\n    previewPlanChange(id: $id, input: $input) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n": typeof types.ChangePlanPreviewDocument,
    "\n  mutation ChangePlanConfirm($id: ID!, $input: ChangePlanInput!) {\n    changeSubscriptionPlan(id: $id, input: $input) {\n      subscription {\n        id\n        planId\n        priceId\n      }\n      invoice {\n        id\n        number\n        total\n      }\n      creditNote {\n        id\n        number\n        total\n      }\n    }\n  }\n": typeof types.ChangePlanConfirmDocument,
    "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n": typeof types.DashboardOverviewDocument,
    "\n  query SubscriptionDetail($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      amount\n      currency\n      provider\n      cancelAtPeriodEnd\n      currentPeriodStart\n      currentPeriodEnd\n      trialEnd\n      createdAt\n      pendingGatewayCommand\n      productId\n      priceId\n      customer {\n        id\n        email\n        name\n      }\n      plan {\n        id\n        name\n      }\n      product {\n        id\n        name\n      }\n      scheduledChange {\n        planId\n        priceId\n        effectiveAt\n      }\n      events {\n        id\n        eventType\n        fromState\n        toState\n        triggeredBy\n        createdAt\n      }\n    }\n    invoices(subscriptionId: $id, first: 50) {\n      edges {\n        node {\n          id\n          number\n          type\n          status\n          total\n          currency\n          issuedAt\n          relatedInvoiceId\n        }\n      }\n    }\n  }\n": typeof types.SubscriptionDetailDocument,
    "\n  subscription SubscriptionChanged($id: ID) {\n    subscriptionUpdated(id: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": typeof types.SubscriptionChangedDocument,
    "\n  mutation SubscriptionPause($id: ID!) {\n    pauseSubscription(id: $id) {\n      id\n      status\n    }\n  }\n": typeof types.SubscriptionPauseDocument,
    "\n  mutation SubscriptionResume($id: ID!) {\n    resumeSubscription(id: $id) {\n      id\n      status\n    }\n  }\n": typeof types.SubscriptionResumeDocument,
    "\n  mutation SubscriptionCancel($id: ID!, $atPeriodEnd: Boolean) {\n    cancelSubscription(id: $id, cancelAtPeriodEnd: $atPeriodEnd) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": typeof types.SubscriptionCancelDocument,
    "\n  mutation SubscriptionRemoveCancellation($id: ID!) {\n    removeScheduledCancellation(id: $id) {\n      id\n      cancelAtPeriodEnd\n    }\n  }\n": typeof types.SubscriptionRemoveCancellationDocument,
    "\n  mutation SubscriptionRemoveChange($id: ID!) {\n    removeScheduledChange(id: $id) {\n      id\n    }\n  }\n": typeof types.SubscriptionRemoveChangeDocument,
    "\n  query SubscriptionsList($first: Int, $after: String, $status: SubscriptionStatus, $planId: ID, $customerId: ID) {\n    subscriptions(first: $first, after: $after, status: $status, planId: $planId, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          status\n          amount\n          currency\n          cancelAtPeriodEnd\n          currentPeriodEnd\n          createdAt\n          customer {\n            id\n            email\n          }\n          plan {\n            id\n            name\n          }\n          product {\n            id\n            name\n          }\n        }\n      }\n    }\n  }\n": typeof types.SubscriptionsListDocument,
    "\n  subscription SubscriptionsChanged {\n    subscriptionsUpdated {\n      id\n      status\n      cancelAtPeriodEnd\n      currentPeriodEnd\n      amount\n    }\n  }\n": typeof types.SubscriptionsChangedDocument,
    "\n  query PortalView {\n    portal {\n      merchantName\n      returnUrl\n      expiresAt\n      customer {\n        id\n        email\n        name\n      }\n      subscriptions {\n        id\n        status\n        amount\n        currency\n        billingFrequency\n        billingInterval\n        currentPeriodEnd\n        trialEnd\n        cancelAtPeriodEnd\n        plan {\n          id\n          name\n        }\n        product {\n          id\n          name\n        }\n        scheduledChange {\n          planId\n          effectiveAt\n        }\n      }\n      invoices {\n        id\n        number\n        type\n        status\n        total\n        currency\n        issuedAt\n      }\n    }\n  }\n": typeof types.PortalViewDocument,
    "\n  mutation PortalCancelAtPeriodEnd($id: ID!) {\n    portalCancelAtPeriodEnd(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": typeof types.PortalCancelAtPeriodEndDocument,
    "\n  mutation PortalKeepSubscription($id: ID!) {\n    portalKeepSubscription(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": typeof types.PortalKeepSubscriptionDocument,
    "\n  mutation PortalAuthorizeMandate($id: ID!) {\n    portalAuthorizeMandate(subscriptionId: $id) {\n      url\n    }\n  }\n": typeof types.PortalAuthorizeMandateDocument,
    "\n  query PortalPlanOptions($id: ID!) {\n    portalPlanOptions(subscriptionId: $id) {\n      planId\n      planName\n      priceId\n      amount\n      currency\n      billingFrequency\n      billingInterval\n      current\n    }\n  }\n": typeof types.PortalPlanOptionsDocument,
    "\n  query PortalPreviewPlanChange($id: ID!, $priceId: ID!) {\n    portalPreviewPlanChange(subscriptionId: $id, priceId: $priceId) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n": typeof types.PortalPreviewPlanChangeDocument,
    "\n  mutation PortalChangePlan($id: ID!, $priceId: ID!) {\n    portalChangePlan(subscriptionId: $id, priceId: $priceId) {\n      subscription {\n        id\n        status\n        planId\n        amount\n      }\n    }\n  }\n": typeof types.PortalChangePlanDocument,
    "\n  query PortalInvoicePdf($id: ID!) {\n    portalInvoicePdf(id: $id) {\n      filename\n      contentType\n      base64\n    }\n  }\n": typeof types.PortalInvoicePdfDocument,
};
const documents: Documents = {
    "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n": types.DashboardMerchantDocument,
    "\n  query ChangePlanOptions($productId: ID!) {\n    product(id: $productId) {\n      id\n      plans {\n        id\n        name\n        billingFrequency\n        billingInterval\n        prices {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n": types.ChangePlanOptionsDocument,
    "\n  query ChangePlanPreview($id: ID!, $input: ChangePlanInput!) {\n    previewPlanChange(id: $id, input: $input) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n": types.ChangePlanPreviewDocument,
    "\n  mutation ChangePlanConfirm($id: ID!, $input: ChangePlanInput!) {\n    changeSubscriptionPlan(id: $id, input: $input) {\n      subscription {\n        id\n        planId\n        priceId\n      }\n      invoice {\n        id\n        number\n        total\n      }\n      creditNote {\n        id\n        number\n        total\n      }\n    }\n  }\n": types.ChangePlanConfirmDocument,
    "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n": types.DashboardOverviewDocument,
    "\n  query SubscriptionDetail($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      amount\n      currency\n      provider\n      cancelAtPeriodEnd\n      currentPeriodStart\n      currentPeriodEnd\n      trialEnd\n      createdAt\n      pendingGatewayCommand\n      productId\n      priceId\n      customer {\n        id\n        email\n        name\n      }\n      plan {\n        id\n        name\n      }\n      product {\n        id\n        name\n      }\n      scheduledChange {\n        planId\n        priceId\n        effectiveAt\n      }\n      events {\n        id\n        eventType\n        fromState\n        toState\n        triggeredBy\n        createdAt\n      }\n    }\n    invoices(subscriptionId: $id, first: 50) {\n      edges {\n        node {\n          id\n          number\n          type\n          status\n          total\n          currency\n          issuedAt\n          relatedInvoiceId\n        }\n      }\n    }\n  }\n": types.SubscriptionDetailDocument,
    "\n  subscription SubscriptionChanged($id: ID) {\n    subscriptionUpdated(id: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": types.SubscriptionChangedDocument,
    "\n  mutation SubscriptionPause($id: ID!) {\n    pauseSubscription(id: $id) {\n      id\n      status\n    }\n  }\n": types.SubscriptionPauseDocument,
    "\n  mutation SubscriptionResume($id: ID!) {\n    resumeSubscription(id: $id) {\n      id\n      status\n    }\n  }\n": types.SubscriptionResumeDocument,
    "\n  mutation SubscriptionCancel($id: ID!, $atPeriodEnd: Boolean) {\n    cancelSubscription(id: $id, cancelAtPeriodEnd: $atPeriodEnd) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": types.SubscriptionCancelDocument,
    "\n  mutation SubscriptionRemoveCancellation($id: ID!) {\n    removeScheduledCancellation(id: $id) {\n      id\n      cancelAtPeriodEnd\n    }\n  }\n": types.SubscriptionRemoveCancellationDocument,
    "\n  mutation SubscriptionRemoveChange($id: ID!) {\n    removeScheduledChange(id: $id) {\n      id\n    }\n  }\n": types.SubscriptionRemoveChangeDocument,
    "\n  query SubscriptionsList($first: Int, $after: String, $status: SubscriptionStatus, $planId: ID, $customerId: ID) {\n    subscriptions(first: $first, after: $after, status: $status, planId: $planId, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          status\n          amount\n          currency\n          cancelAtPeriodEnd\n          currentPeriodEnd\n          createdAt\n          customer {\n            id\n            email\n          }\n          plan {\n            id\n            name\n          }\n          product {\n            id\n            name\n          }\n        }\n      }\n    }\n  }\n": types.SubscriptionsListDocument,
    "\n  subscription SubscriptionsChanged {\n    subscriptionsUpdated {\n      id\n      status\n      cancelAtPeriodEnd\n      currentPeriodEnd\n      amount\n    }\n  }\n": types.SubscriptionsChangedDocument,
    "\n  query PortalView {\n    portal {\n      merchantName\n      returnUrl\n      expiresAt\n      customer {\n        id\n        email\n        name\n      }\n      subscriptions {\n        id\n        status\n        amount\n        currency\n        billingFrequency\n        billingInterval\n        currentPeriodEnd\n        trialEnd\n        cancelAtPeriodEnd\n        plan {\n          id\n          name\n        }\n        product {\n          id\n          name\n        }\n        scheduledChange {\n          planId\n          effectiveAt\n        }\n      }\n      invoices {\n        id\n        number\n        type\n        status\n        total\n        currency\n        issuedAt\n      }\n    }\n  }\n": types.PortalViewDocument,
    "\n  mutation PortalCancelAtPeriodEnd($id: ID!) {\n    portalCancelAtPeriodEnd(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": types.PortalCancelAtPeriodEndDocument,
    "\n  mutation PortalKeepSubscription($id: ID!) {\n    portalKeepSubscription(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n": types.PortalKeepSubscriptionDocument,
    "\n  mutation PortalAuthorizeMandate($id: ID!) {\n    portalAuthorizeMandate(subscriptionId: $id) {\n      url\n    }\n  }\n": types.PortalAuthorizeMandateDocument,
    "\n  query PortalPlanOptions($id: ID!) {\n    portalPlanOptions(subscriptionId: $id) {\n      planId\n      planName\n      priceId\n      amount\n      currency\n      billingFrequency\n      billingInterval\n      current\n    }\n  }\n": types.PortalPlanOptionsDocument,
    "\n  query PortalPreviewPlanChange($id: ID!, $priceId: ID!) {\n    portalPreviewPlanChange(subscriptionId: $id, priceId: $priceId) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n": types.PortalPreviewPlanChangeDocument,
    "\n  mutation PortalChangePlan($id: ID!, $priceId: ID!) {\n    portalChangePlan(subscriptionId: $id, priceId: $priceId) {\n      subscription {\n        id\n        status\n        planId\n        amount\n      }\n    }\n  }\n": types.PortalChangePlanDocument,
    "\n  query PortalInvoicePdf($id: ID!) {\n    portalInvoicePdf(id: $id) {\n      filename\n      contentType\n      base64\n    }\n  }\n": types.PortalInvoicePdfDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n"): (typeof documents)["\n  query DashboardMerchant {\n    merchant {\n      id\n      name\n      reportingCurrency\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChangePlanOptions($productId: ID!) {\n    product(id: $productId) {\n      id\n      plans {\n        id\n        name\n        billingFrequency\n        billingInterval\n        prices {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ChangePlanOptions($productId: ID!) {\n    product(id: $productId) {\n      id\n      plans {\n        id\n        name\n        billingFrequency\n        billingInterval\n        prices {\n          id\n          amount\n          currency\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChangePlanPreview($id: ID!, $input: ChangePlanInput!) {\n    previewPlanChange(id: $id, input: $input) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n"): (typeof documents)["\n  query ChangePlanPreview($id: ID!, $input: ChangePlanInput!) {\n    previewPlanChange(id: $id, input: $input) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ChangePlanConfirm($id: ID!, $input: ChangePlanInput!) {\n    changeSubscriptionPlan(id: $id, input: $input) {\n      subscription {\n        id\n        planId\n        priceId\n      }\n      invoice {\n        id\n        number\n        total\n      }\n      creditNote {\n        id\n        number\n        total\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation ChangePlanConfirm($id: ID!, $input: ChangePlanInput!) {\n    changeSubscriptionPlan(id: $id, input: $input) {\n      subscription {\n        id\n        planId\n        priceId\n      }\n      invoice {\n        id\n        number\n        total\n      }\n      creditNote {\n        id\n        number\n        total\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n"): (typeof documents)["\n  query DashboardOverview {\n    mrr(interval: MONTH) {\n      currency\n      mrr\n      arr\n      activeSubscriptions\n      payingCustomers\n      arpu\n      asOf\n      movements {\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n        netNew\n      }\n      series {\n        periodEnd\n        mrr\n        new\n        expansion\n        reactivation\n        contraction\n        churn\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SubscriptionDetail($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      amount\n      currency\n      provider\n      cancelAtPeriodEnd\n      currentPeriodStart\n      currentPeriodEnd\n      trialEnd\n      createdAt\n      pendingGatewayCommand\n      productId\n      priceId\n      customer {\n        id\n        email\n        name\n      }\n      plan {\n        id\n        name\n      }\n      product {\n        id\n        name\n      }\n      scheduledChange {\n        planId\n        priceId\n        effectiveAt\n      }\n      events {\n        id\n        eventType\n        fromState\n        toState\n        triggeredBy\n        createdAt\n      }\n    }\n    invoices(subscriptionId: $id, first: 50) {\n      edges {\n        node {\n          id\n          number\n          type\n          status\n          total\n          currency\n          issuedAt\n          relatedInvoiceId\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query SubscriptionDetail($id: ID!) {\n    subscription(id: $id) {\n      id\n      status\n      amount\n      currency\n      provider\n      cancelAtPeriodEnd\n      currentPeriodStart\n      currentPeriodEnd\n      trialEnd\n      createdAt\n      pendingGatewayCommand\n      productId\n      priceId\n      customer {\n        id\n        email\n        name\n      }\n      plan {\n        id\n        name\n      }\n      product {\n        id\n        name\n      }\n      scheduledChange {\n        planId\n        priceId\n        effectiveAt\n      }\n      events {\n        id\n        eventType\n        fromState\n        toState\n        triggeredBy\n        createdAt\n      }\n    }\n    invoices(subscriptionId: $id, first: 50) {\n      edges {\n        node {\n          id\n          number\n          type\n          status\n          total\n          currency\n          issuedAt\n          relatedInvoiceId\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SubscriptionChanged($id: ID) {\n    subscriptionUpdated(id: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"): (typeof documents)["\n  subscription SubscriptionChanged($id: ID) {\n    subscriptionUpdated(id: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubscriptionPause($id: ID!) {\n    pauseSubscription(id: $id) {\n      id\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation SubscriptionPause($id: ID!) {\n    pauseSubscription(id: $id) {\n      id\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubscriptionResume($id: ID!) {\n    resumeSubscription(id: $id) {\n      id\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation SubscriptionResume($id: ID!) {\n    resumeSubscription(id: $id) {\n      id\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubscriptionCancel($id: ID!, $atPeriodEnd: Boolean) {\n    cancelSubscription(id: $id, cancelAtPeriodEnd: $atPeriodEnd) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"): (typeof documents)["\n  mutation SubscriptionCancel($id: ID!, $atPeriodEnd: Boolean) {\n    cancelSubscription(id: $id, cancelAtPeriodEnd: $atPeriodEnd) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubscriptionRemoveCancellation($id: ID!) {\n    removeScheduledCancellation(id: $id) {\n      id\n      cancelAtPeriodEnd\n    }\n  }\n"): (typeof documents)["\n  mutation SubscriptionRemoveCancellation($id: ID!) {\n    removeScheduledCancellation(id: $id) {\n      id\n      cancelAtPeriodEnd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubscriptionRemoveChange($id: ID!) {\n    removeScheduledChange(id: $id) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation SubscriptionRemoveChange($id: ID!) {\n    removeScheduledChange(id: $id) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SubscriptionsList($first: Int, $after: String, $status: SubscriptionStatus, $planId: ID, $customerId: ID) {\n    subscriptions(first: $first, after: $after, status: $status, planId: $planId, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          status\n          amount\n          currency\n          cancelAtPeriodEnd\n          currentPeriodEnd\n          createdAt\n          customer {\n            id\n            email\n          }\n          plan {\n            id\n            name\n          }\n          product {\n            id\n            name\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query SubscriptionsList($first: Int, $after: String, $status: SubscriptionStatus, $planId: ID, $customerId: ID) {\n    subscriptions(first: $first, after: $after, status: $status, planId: $planId, customerId: $customerId) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      edges {\n        node {\n          id\n          status\n          amount\n          currency\n          cancelAtPeriodEnd\n          currentPeriodEnd\n          createdAt\n          customer {\n            id\n            email\n          }\n          plan {\n            id\n            name\n          }\n          product {\n            id\n            name\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SubscriptionsChanged {\n    subscriptionsUpdated {\n      id\n      status\n      cancelAtPeriodEnd\n      currentPeriodEnd\n      amount\n    }\n  }\n"): (typeof documents)["\n  subscription SubscriptionsChanged {\n    subscriptionsUpdated {\n      id\n      status\n      cancelAtPeriodEnd\n      currentPeriodEnd\n      amount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PortalView {\n    portal {\n      merchantName\n      returnUrl\n      expiresAt\n      customer {\n        id\n        email\n        name\n      }\n      subscriptions {\n        id\n        status\n        amount\n        currency\n        billingFrequency\n        billingInterval\n        currentPeriodEnd\n        trialEnd\n        cancelAtPeriodEnd\n        plan {\n          id\n          name\n        }\n        product {\n          id\n          name\n        }\n        scheduledChange {\n          planId\n          effectiveAt\n        }\n      }\n      invoices {\n        id\n        number\n        type\n        status\n        total\n        currency\n        issuedAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query PortalView {\n    portal {\n      merchantName\n      returnUrl\n      expiresAt\n      customer {\n        id\n        email\n        name\n      }\n      subscriptions {\n        id\n        status\n        amount\n        currency\n        billingFrequency\n        billingInterval\n        currentPeriodEnd\n        trialEnd\n        cancelAtPeriodEnd\n        plan {\n          id\n          name\n        }\n        product {\n          id\n          name\n        }\n        scheduledChange {\n          planId\n          effectiveAt\n        }\n      }\n      invoices {\n        id\n        number\n        type\n        status\n        total\n        currency\n        issuedAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PortalCancelAtPeriodEnd($id: ID!) {\n    portalCancelAtPeriodEnd(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"): (typeof documents)["\n  mutation PortalCancelAtPeriodEnd($id: ID!) {\n    portalCancelAtPeriodEnd(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PortalKeepSubscription($id: ID!) {\n    portalKeepSubscription(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"): (typeof documents)["\n  mutation PortalKeepSubscription($id: ID!) {\n    portalKeepSubscription(subscriptionId: $id) {\n      id\n      status\n      cancelAtPeriodEnd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PortalAuthorizeMandate($id: ID!) {\n    portalAuthorizeMandate(subscriptionId: $id) {\n      url\n    }\n  }\n"): (typeof documents)["\n  mutation PortalAuthorizeMandate($id: ID!) {\n    portalAuthorizeMandate(subscriptionId: $id) {\n      url\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PortalPlanOptions($id: ID!) {\n    portalPlanOptions(subscriptionId: $id) {\n      planId\n      planName\n      priceId\n      amount\n      currency\n      billingFrequency\n      billingInterval\n      current\n    }\n  }\n"): (typeof documents)["\n  query PortalPlanOptions($id: ID!) {\n    portalPlanOptions(subscriptionId: $id) {\n      planId\n      planName\n      priceId\n      amount\n      currency\n      billingFrequency\n      billingInterval\n      current\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PortalPreviewPlanChange($id: ID!, $priceId: ID!) {\n    portalPreviewPlanChange(subscriptionId: $id, priceId: $priceId) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n"): (typeof documents)["\n  query PortalPreviewPlanChange($id: ID!, $priceId: ID!) {\n    portalPreviewPlanChange(subscriptionId: $id, priceId: $priceId) {\n      proration {\n        creditAmount\n        debitAmount\n        netAmount\n        currency\n      }\n      taxAmount\n      total\n      currency\n      newAmount\n      effectiveAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PortalChangePlan($id: ID!, $priceId: ID!) {\n    portalChangePlan(subscriptionId: $id, priceId: $priceId) {\n      subscription {\n        id\n        status\n        planId\n        amount\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation PortalChangePlan($id: ID!, $priceId: ID!) {\n    portalChangePlan(subscriptionId: $id, priceId: $priceId) {\n      subscription {\n        id\n        status\n        planId\n        amount\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PortalInvoicePdf($id: ID!) {\n    portalInvoicePdf(id: $id) {\n      filename\n      contentType\n      base64\n    }\n  }\n"): (typeof documents)["\n  query PortalInvoicePdf($id: ID!) {\n    portalInvoicePdf(id: $id) {\n      filename\n      contentType\n      base64\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;