import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

/*
 * `DATABASE_URL`'s TLS parameters read with libpq's meaning, checked at start-up like every other
 * setting, and pg's TLS options made of them for the PostgreSQL store.
 */

/** libpq's `sslmode` values, weakest first. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** `DATABASE_URL`'s TLS parameters are unknown or contradict each other. The message never quotes the URL. */
export class DatabaseTlsError extends Error {
  override name = 'DatabaseTlsError';
}

/** Where the certificate authorities to trust come from: a PEM file, or the system's (Node's bundle). */
export type RootCert = { kind: 'file'; path: string } | { kind: 'system' };

/** The TLS settings of a `DATABASE_URL`, read with libpq's meaning. */
export interface DatabaseTls {
  /** The URL without its TLS parameters, for pg: its own reading of them differs from libpq's. */
  connectionString: string;
  /**
   * The mode in effect. Without `sslmode`: `verify-full` when `sslrootcert=system` (as libpq),
   * `prefer` when another TLS parameter is given (libpq's default), otherwise `undefined`: no TLS.
   */
  mode: SslMode | undefined;
  rootCert: RootCert | undefined;
  /** Client certificate and key files (PEM), given together. */
  clientCert: { certPath: string; keyPath: string } | undefined;
  /** `direct` starts TLS at once instead of asking the server first (PostgreSQL 17). */
  negotiation: 'postgres' | 'direct' | undefined;
}

const TLS_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslnegotiation'] as const;
/** pg's own spellings, which would override the settings read here; refused so nothing is ambiguous. */
const REFUSED_PARAMS: Record<string, string> = {
  ssl: 'is pg-specific; use sslmode (libpq meaning, see docs/configuration.md)',
  uselibpqcompat: 'is not needed: sslmode already has libpq meaning here',
};
const shown = (value: string) => JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}…` : value);

/**
 * Reads the TLS parameters of a PostgreSQL URL (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`,
 * `sslnegotiation`) with libpq's meaning, and the URL without them.
 * Throws {@link DatabaseTlsError} for an unknown mode or a combination libpq refuses.
 */
export function parseDatabaseTls(url: string): DatabaseTls {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseTlsError('is not a valid URL');
  }
  const params = parsed.searchParams;
  for (const [name, why] of Object.entries(REFUSED_PARAMS)) {
    if (params.has(name)) throw new DatabaseTlsError(`parameter ${name} ${why}`);
  }
  const one = (name: string): string | undefined => {
    const values = params.getAll(name).filter((v) => v.trim() !== '');
    if (values.length > 1) throw new DatabaseTlsError(`gives ${name} more than once`);
    return values[0]?.trim();
  };

  const givenMode = one('sslmode');
  if (givenMode !== undefined && !(SSL_MODES as readonly string[]).includes(givenMode)) {
    throw new DatabaseTlsError(
      `sslmode ${shown(givenMode)} is not one of ${SSL_MODES.join(', ')}` +
        (givenMode === 'no-verify' ? ' (pg "no-verify" is sslmode=require here)' : ''),
    );
  }
  const root = one('sslrootcert');
  const rootCert: RootCert | undefined =
    root === undefined ? undefined : root === 'system' ? { kind: 'system' } : { kind: 'file', path: root };
  const certPath = one('sslcert');
  const keyPath = one('sslkey');
  if ((certPath === undefined) !== (keyPath === undefined)) {
    throw new DatabaseTlsError('needs sslcert and sslkey together (a client certificate and its key)');
  }
  const negotiation = one('sslnegotiation');
  if (negotiation !== undefined && negotiation !== 'postgres' && negotiation !== 'direct') {
    throw new DatabaseTlsError(`sslnegotiation ${shown(negotiation)} is not one of postgres, direct`);
  }

  const anyTlsParam = rootCert !== undefined || certPath !== undefined || negotiation !== undefined;
  const mode: SslMode | undefined =
    (givenMode as SslMode | undefined) ??
    (rootCert?.kind === 'system' ? 'verify-full' : anyTlsParam ? 'prefer' : undefined);

  if (rootCert?.kind === 'system' && mode !== 'verify-full') {
    throw new DatabaseTlsError(
      `sslrootcert=system needs sslmode=verify-full (libpq refuses sslmode=${mode} with it)`,
    );
  }
  if (mode === 'verify-ca' && rootCert === undefined) {
    throw new DatabaseTlsError(
      'sslmode=verify-ca needs sslrootcert, the file of the CA to trust: against the public CAs, ' +
        'any certificate they issued would pass; use verify-full to check the host name too',
    );
  }
  if (
    negotiation === 'direct' &&
    (mode === undefined || SSL_MODES.indexOf(mode) < SSL_MODES.indexOf('require'))
  ) {
    throw new DatabaseTlsError('sslnegotiation=direct needs sslmode=require or stronger');
  }

  let connectionString = url;
  if (TLS_PARAMS.some((name) => params.has(name))) {
    for (const name of TLS_PARAMS) params.delete(name);
    connectionString = parsed.toString();
  }
  return {
    connectionString,
    mode,
    rootCert,
    clientCert: certPath !== undefined && keyPath !== undefined ? { certPath, keyPath } : undefined,
    negotiation,
  };
}

/** Reads a PEM file; a test passes its own. */
export type ReadPem = (path: string) => string;
const readPem: ReadPem = (path) => readFileSync(path, 'utf8');

/**
 * pg's `ssl` option for settings read by {@link parseDatabaseTls}: `false` for no TLS, else
 * Node TLS options with libpq's meaning of the mode:
 * - `disable`, or no mode: no TLS.
 * - `allow`, `prefer`, `require`: encrypted, certificate not checked; with `sslrootcert` the
 *   chain is checked against it (not the host name), as libpq does. libpq's `allow` and `prefer`
 *   fall back to a plain connection when TLS fails; pg cannot, so here they fail instead.
 * - `verify-ca`: chain checked against `sslrootcert`, host name not checked.
 * - `verify-full`: chain and host name checked, against `sslrootcert` or the system's CAs.
 * Throws {@link DatabaseTlsError} when a certificate file cannot be read.
 */
export function tlsOptions(tls: DatabaseTls, read: ReadPem = readPem): false | ConnectionOptions {
  if (tls.mode === undefined || tls.mode === 'disable') return false;
  const load = (param: string, path: string) => {
    try {
      return read(path);
    } catch (error) {
      throw new DatabaseTlsError(`${param}: cannot read ${path}`, { cause: error });
    }
  };
  const ca = tls.rootCert?.kind === 'file' ? load('sslrootcert', tls.rootCert.path) : undefined;
  const client = tls.clientCert
    ? { cert: load('sslcert', tls.clientCert.certPath), key: load('sslkey', tls.clientCert.keyPath) }
    : {};
  const chainOnly = { rejectUnauthorized: true, ca, checkServerIdentity: () => undefined };
  switch (tls.mode) {
    case 'allow':
    case 'prefer':
    case 'require':
      return ca === undefined ? { rejectUnauthorized: false, ...client } : { ...chainOnly, ...client };
    case 'verify-ca':
      return { ...chainOnly, ...client };
    case 'verify-full':
      return { rejectUnauthorized: true, ...(ca === undefined ? {} : { ca }), ...client };
  }
}
