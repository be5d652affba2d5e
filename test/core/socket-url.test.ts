import { Client } from 'pg';
import { openDatabase } from '../../src/core/db';
import { socketHost } from '../../src/core/orm-config';
import { entities } from '../../src/entities';
import { freshDatabase } from '../harness/database';

/**
 * DATABASE_URL may name a Unix socket directory the libpq way (`?host=/var/run/postgresql`): a co-located server is
 * then reached without TCP, whose loopback sends cost the service a good part of its time per statement. Every
 * connection must take it, the ORM's pool included (MikroORM alone reads only the URL's host name).
 */

it('reads a socket directory from the host parameter, and nothing else', () => {
  expect(socketHost('postgresql://postgres@localhost:5432/db?host=/var/run/postgresql')).toEqual({
    host: '/var/run/postgresql',
  });
  expect(socketHost('postgresql://postgres@localhost/db?host=%2Ftmp')).toEqual({ host: '/tmp' });
  expect(socketHost('postgresql://postgres@127.0.0.1:5432/db')).toEqual({});
  expect(socketHost('postgresql://postgres@127.0.0.1:5432/db?host=db.internal')).toEqual({}); // a host name: the URL's own rules
  expect(socketHost('not a url')).toEqual({});
});

it('connects the ORM pool and the plain connections through the socket the URL names', async () => {
  const db = await freshDatabase('cadence_sock');
  try {
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    const { rows } = await admin.query(
      `select current_setting('unix_socket_directories') as dirs, current_setting('port') as port`,
    );
    await admin.end();
    const dir = String(rows[0].dirs).split(',')[0].trim();
    if (!dir.startsWith('/')) {
      // Debian's server (the one .ci/run starts) listens on /var/run/postgresql: a server without one cannot run this.
      throw new Error(`the PostgreSQL server has no Unix socket directory (unix_socket_directories=${rows[0].dirs})`);
    }
    const u = new URL(db.url);
    u.hostname = 'localhost';
    u.port = String(rows[0].port);
    u.searchParams.set('host', dir);
    const orm = await openDatabase(u.toString(), entities, 2);
    try {
      // A Unix-socket session has no client address; a TCP one (what the URL's host name alone would give) has one.
      const [viaOrm] = await orm.em
        .getConnection()
        .execute<{ addr: string | null; db: string }[]>('select inet_client_addr() as addr, current_database() as db');
      expect(viaOrm).toEqual({ addr: null, db: db.name });
      const plain = new Client({ connectionString: u.toString() });
      await plain.connect();
      const { rows: viaPg } = await plain.query('select inet_client_addr() as addr');
      await plain.end();
      expect(viaPg[0].addr).toBeNull();
    } finally {
      await orm.close(true);
    }
  } finally {
    await db.drop();
  }
});
