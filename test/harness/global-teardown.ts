import fs from 'node:fs';

export default async function globalTeardown() {
  const embedded = (globalThis as { __cadenceEmbedded?: { stop(): Promise<void>; dir: string } }).__cadenceEmbedded;
  if (embedded) {
    await embedded.stop();
    fs.rmSync(embedded.dir, { recursive: true, force: true });
  }
}
