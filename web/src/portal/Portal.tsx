import { Container, Text, Title } from '@mantine/core';

/** The customer portal (docs/portal.md). */
export function Portal() {
  return (
    <Container size="sm" py="xl">
      <Title order={2}>Your subscriptions</Title>
      <Text>Loading…</Text>
    </Container>
  );
}
