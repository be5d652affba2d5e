import { Badge, Box, Button, Card, Group, ScrollArea, Stack, Table, Text } from '@mantine/core';
import type { GrowthPackage } from './offerings-query';
import type { PaywallLook } from './paywall-config';
import { planPrice } from './price-text';

export type Template = 'SIMPLE' | 'FEATURE_COMPARISON' | 'SLIDING_CARDS';

interface LayoutProps {
  look: PaywallLook;
  packages: GrowthPackage[];
}

/** The package's price lines: each active product's plans with their default prices. */
function PriceLines({ pkg }: { pkg: GrowthPackage }) {
  if (pkg.products.length === 0)
    return (
      <Text size="sm" c="dimmed">
        Nothing for sale
      </Text>
    );
  return (
    <Stack gap={2}>
      {pkg.products.map((prod) =>
        prod.plans.map((pl) => (
          <Text size="sm" key={pl.id}>
            <Text span fw={700}>
              {planPrice(pl)}
            </Text>{' '}
            <Text span c="dimmed" size="xs">
              {prod.name} · {pl.name}
              {pl.trialPeriodDays > 0 ? ` · ${pl.trialPeriodDays}-day trial` : ''}
            </Text>
          </Text>
        )),
      )}
    </Stack>
  );
}

const Header = ({ look }: { look: PaywallLook }) => (
  <Stack gap={2} align="center" mb="sm">
    <Text fw={800} fz="xl" ta="center">
      {look.title}
    </Text>
    {look.subtitle && (
      <Text c="dimmed" ta="center" size="sm">
        {look.subtitle}
      </Text>
    )}
  </Stack>
);

const isHighlighted = (look: PaywallLook, pkg: GrowthPackage, i: number) =>
  look.highlight ? look.highlight === pkg.lookupKey : i === 0;

/** SIMPLE: the packages stacked as choices, the highlighted one outlined, one button. */
function Simple({ look, packages }: LayoutProps) {
  return (
    <Stack gap="xs" maw={420} mx="auto">
      <Header look={look} />
      {packages.map((p, i) => (
        <Card
          key={p.id}
          withBorder
          padding="sm"
          style={
            isHighlighted(look, p, i)
              ? { borderColor: look.primary ?? 'var(--mantine-color-indigo-6)', borderWidth: 2 }
              : undefined
          }
        >
          <Group justify="space-between" align="flex-start">
            <Text fw={600}>{p.name}</Text>
            {isHighlighted(look, p, i) && look.badge && <Badge color={look.primary ?? 'indigo'}>{look.badge}</Badge>}
          </Group>
          <PriceLines pkg={p} />
        </Card>
      ))}
      {look.features.length > 0 && (
        <Stack gap={0} mt="xs">
          {look.features.map((f) => (
            <Text size="sm" key={f.name}>
              ✓ {f.name}
            </Text>
          ))}
        </Stack>
      )}
      <Button fullWidth color={look.primary ?? 'indigo'} mt="xs" tabIndex={-1}>
        {look.cta}
      </Button>
    </Stack>
  );
}

/** FEATURE_COMPARISON: packages as columns, the config's features as rows ticked per package. */
function FeatureComparison({ look, packages }: LayoutProps) {
  return (
    <Box>
      <Header look={look} />
      <ScrollArea>
        <Table withTableBorder withColumnBorders aria-label="Feature comparison" fz="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Feature</Table.Th>
              {packages.map((p, i) => (
                <Table.Th
                  key={p.id}
                  ta="center"
                  style={isHighlighted(look, p, i) ? { background: 'var(--mantine-color-indigo-light)' } : undefined}
                >
                  {p.name}
                  {isHighlighted(look, p, i) && look.badge && (
                    <Badge ml={4} size="xs" color={look.primary ?? 'indigo'}>
                      {look.badge}
                    </Badge>
                  )}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            <Table.Tr>
              <Table.Th scope="row">Price</Table.Th>
              {packages.map((p) => (
                <Table.Td key={p.id}>
                  <PriceLines pkg={p} />
                </Table.Td>
              ))}
            </Table.Tr>
            {look.features.map((f) => (
              <Table.Tr key={f.name}>
                <Table.Th scope="row" fw={400}>
                  {f.name}
                </Table.Th>
                {packages.map((p) => {
                  const has = f.packages === null || f.packages.includes(p.lookupKey);
                  return (
                    <Table.Td key={p.id} ta="center" aria-label={has ? 'Included' : 'Not included'}>
                      {has ? '✓' : '—'}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            ))}
            <Table.Tr>
              <Table.Td />
              {packages.map((p, i) => (
                <Table.Td key={p.id} ta="center">
                  <Button
                    size="xs"
                    tabIndex={-1}
                    color={look.primary ?? 'indigo'}
                    variant={isHighlighted(look, p, i) ? 'filled' : 'outline'}
                  >
                    {look.cta}
                  </Button>
                </Table.Td>
              ))}
            </Table.Tr>
          </Table.Tbody>
        </Table>
      </ScrollArea>
      {look.features.length === 0 && (
        <Text size="xs" c="dimmed" mt="xs">
          Add "features" to the config to fill the comparison rows.
        </Text>
      )}
    </Box>
  );
}

/** SLIDING_CARDS: one card per package side by side, scrolled sideways on a phone. */
function SlidingCards({ look, packages }: LayoutProps) {
  return (
    <Box>
      <Header look={look} />
      <ScrollArea type="auto" offsetScrollbars>
        <Group wrap="nowrap" align="stretch" gap="sm" pb="xs">
          {packages.map((p, i) => {
            const hi = isHighlighted(look, p, i);
            return (
              <Card
                key={p.id}
                withBorder
                shadow={hi ? 'md' : undefined}
                w={220}
                miw={220}
                padding="md"
                style={
                  hi ? { borderColor: look.primary ?? 'var(--mantine-color-indigo-6)', borderWidth: 2 } : undefined
                }
                data-testid="paywall-card"
              >
                <Stack gap="xs" h="100%" justify="space-between">
                  <Stack gap="xs">
                    <Group justify="space-between">
                      <Text fw={700}>{p.name}</Text>
                      {hi && look.badge && <Badge color={look.primary ?? 'indigo'}>{look.badge}</Badge>}
                    </Group>
                    {p.description && (
                      <Text size="xs" c="dimmed">
                        {p.description}
                      </Text>
                    )}
                    <PriceLines pkg={p} />
                    {look.features
                      .filter((f) => f.packages === null || f.packages.includes(p.lookupKey))
                      .map((f) => (
                        <Text size="xs" key={f.name}>
                          ✓ {f.name}
                        </Text>
                      ))}
                  </Stack>
                  <Button size="xs" tabIndex={-1} color={look.primary ?? 'indigo'} variant={hi ? 'filled' : 'light'}>
                    {look.cta}
                  </Button>
                </Stack>
              </Card>
            );
          })}
        </Group>
      </ScrollArea>
    </Box>
  );
}

/** One offering drawn in one template, as a customer's paywall would show it. */
export function PaywallLayout({ template, look, packages }: LayoutProps & { template: Template }) {
  if (packages.length === 0)
    return (
      <Text size="sm" c="dimmed">
        This offering has no packages to show.
      </Text>
    );
  return (
    <Box data-template={template} data-testid="paywall-layout">
      {template === 'SIMPLE' && <Simple look={look} packages={packages} />}
      {template === 'FEATURE_COMPARISON' && <FeatureComparison look={look} packages={packages} />}
      {template === 'SLIDING_CARDS' && <SlidingCards look={look} packages={packages} />}
    </Box>
  );
}
