import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { type DatabaseTls, DatabaseTlsError } from '../../config/database-tls.js';

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
