import { useState } from 'react';
import { Button, Card, Group, Modal, Stack, Table, Text } from '@mantine/core';
import { Select } from '../../lib/select';
import { useClient, useQuery, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import type { InvoiceType } from '../../gql/graphql';
import { base64Blob, downloadBase64 } from '../../lib/download';
import { Day, ErrorNote, Loading, Money, PageTitle, PagerControls, StatusBadge, usePager } from '../../lib/ui';

const InvoicesList = graphql(`
  query InvoicesList($first: Int, $after: String, $type: InvoiceType) {
    invoices(first: $first, after: $after, type: $type) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          number
          type
          status
          billingReason
          total
          taxAmount
          amountPaid
          amountDue
          amountCredited
          currency
          issuedAt
          relatedInvoiceId
          recipient {
            name
            email
          }
        }
      }
    }
  }
`);

const InvoicePdf = graphql(`
  query InvoicePdf($id: ID!) {
    invoice(id: $id) {
      id
      pdf {
        filename
        contentType
        base64
      }
    }
  }
`);

export function Invoices() {
  const [type, setType] = useState<InvoiceType | null>(null);
  const pager = usePager();
  const [{ data, error, fetching }] = useQuery({
    query: InvoicesList,
    variables: { first: 25, after: pager.after, type },
  });
  const client = useClient();
  const [viewing, setViewing] = useState<{ url: string; name: string } | null>(null);
  const [pdfError, setPdfError] = useState<CombinedError | null>(null);
  const pdf = async (id: string, action: 'view' | 'download') => {
    const r = await client.query(InvoicePdf, { id }, { requestPolicy: 'network-only' }).toPromise();
    setPdfError(r.error ?? null);
    const doc = r.data?.invoice.pdf;
    if (!doc) return;
    if (action === 'download') downloadBase64(doc.base64, doc.contentType, doc.filename);
    else setViewing({ url: URL.createObjectURL(base64Blob(doc.base64, doc.contentType)), name: doc.filename });
  };
  const i = data?.invoices;
  const numberOf = (id: string | null | undefined) => i?.edges.find((e) => e.node.id === id)?.node.number ?? id;
  return (
    <Stack>
      <PageTitle>Invoices and credit notes</PageTitle>
      <Select
        label="Type"
        placeholder="Both"
        clearable
        maw={240}
        value={type}
        onChange={(v) => {
          setType(v as InvoiceType | null);
          pager.reset();
        }}
        data={[
          { value: 'INVOICE', label: 'Invoices' },
          { value: 'CREDIT_NOTE', label: 'Credit notes' },
        ]}
      />
      <ErrorNote error={error ?? pdfError} />
      {fetching && !i && <Loading />}
      {i && (
        <Card withBorder padding={0}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Number</Table.Th>
                <Table.Th>Recipient</Table.Th>
                <Table.Th>Issued</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Total</Table.Th>
                <Table.Th ta="right">Paid / due / credited</Table.Th>
                <Table.Th>PDF</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {i.edges.map(({ node: inv }) => (
                <Table.Tr key={inv.id} data-invoice-id={inv.id}>
                  <Table.Td>
                    {inv.type === 'CREDIT_NOTE' ? 'Credit note ' : ''}
                    {inv.number}
                    {inv.relatedInvoiceId && (
                      <Text size="xs" c="dimmed">
                        against {numberOf(inv.relatedInvoiceId)}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{inv.recipient.name ?? inv.recipient.email}</Table.Td>
                  <Table.Td>
                    <Day at={inv.issuedAt} />
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={inv.status} />
                  </Table.Td>
                  <Table.Td ta="right">
                    <Money amount={inv.total} currency={inv.currency} />
                  </Table.Td>
                  <Table.Td ta="right">
                    <Text size="xs">
                      <Money amount={inv.amountPaid} currency={inv.currency} /> /{' '}
                      <Money amount={inv.amountDue} currency={inv.currency} /> /{' '}
                      <Money amount={inv.amountCredited} currency={inv.currency} />
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button size="compact-xs" variant="default" onClick={() => pdf(inv.id, 'view')}>
                        View PDF
                      </Button>
                      <Button size="compact-xs" variant="default" onClick={() => pdf(inv.id, 'download')}>
                        Download PDF
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <PagerControls pager={pager} pageInfo={i?.pageInfo} totalCount={i?.totalCount} />
      <Modal
        opened={!!viewing}
        onClose={() => {
          if (viewing) URL.revokeObjectURL(viewing.url);
          setViewing(null);
        }}
        title={viewing?.name}
        size="xl"
      >
        {viewing && (
          <object data={viewing.url} type="application/pdf" width="100%" height="700" aria-label={viewing.name}>
            <Text>
              This browser shows no PDFs inline: use <em>Download PDF</em>.
            </Text>
          </object>
        )}
      </Modal>
    </Stack>
  );
}
