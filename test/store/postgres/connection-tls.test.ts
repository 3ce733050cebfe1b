import { describe, expect, it } from 'vitest';
import { DatabaseTlsError, parseDatabaseTls } from '../../../src/config/database-tls.js';
import { tlsOptions } from '../../../src/store/postgres/connection-tls.js';

const BASE = 'postgres://bot:pw@db.example.com:5432/docs';
const PEM: Record<string, string> = {
  '/etc/ssl/db-ca.pem': 'CA PEM',
  '/etc/ssl/client.pem': 'CLIENT CERT PEM',
  '/etc/ssl/client.key': 'CLIENT KEY PEM',
};
const read = (path: string) => {
  const pem = PEM[path];
  if (pem === undefined) throw new Error(`ENOENT: ${path}`);
  return pem;
};
const optionsFor = (query: string) => tlsOptions(parseDatabaseTls(`${BASE}${query}`), read);
const refusal = (query: string) => {
  try {
    optionsFor(query);
  } catch (error) {
    expect(error).toBeInstanceOf(DatabaseTlsError);
    return (error as Error).message;
  }
  throw new Error(`expected ${query} to be refused`);
};

/** What Node's TLS would check with these options. */
function checks(options: ReturnType<typeof optionsFor>) {
  if (options === false) return 'no TLS';
  const chain = options.rejectUnauthorized !== false;
  const hostName = chain && options.checkServerIdentity === undefined;
  return { chain, hostName, ca: options.ca ?? 'system' };
}

describe('sslmode, with libpq meaning', () => {
  it('no mode and disable: no TLS', () => {
    expect(checks(optionsFor(''))).toBe('no TLS');
    expect(checks(optionsFor('?sslmode=disable'))).toBe('no TLS');
    expect(checks(optionsFor('?sslmode=disable&sslrootcert=/etc/ssl/db-ca.pem'))).toBe('no TLS');
  });

  it('allow, prefer, require: encrypted, certificate not checked', () => {
    for (const mode of ['allow', 'prefer', 'require']) {
      expect(checks(optionsFor(`?sslmode=${mode}`))).toEqual({ chain: false, hostName: false, ca: 'system' });
    }
  });

  it('require with sslrootcert checks the chain against it, not the host name (as verify-ca)', () => {
    expect(checks(optionsFor('?sslmode=require&sslrootcert=/etc/ssl/db-ca.pem'))).toEqual({
      chain: true,
      hostName: false,
      ca: 'CA PEM',
    });
    // libpq's default mode is prefer: a root certificate alone asks for TLS and a checked chain.
    expect(checks(optionsFor('?sslrootcert=/etc/ssl/db-ca.pem'))).toEqual({
      chain: true,
      hostName: false,
      ca: 'CA PEM',
    });
  });

  it('verify-ca checks the chain against sslrootcert, not the host name', () => {
    expect(checks(optionsFor('?sslmode=verify-ca&sslrootcert=/etc/ssl/db-ca.pem'))).toEqual({
      chain: true,
      hostName: false,
      ca: 'CA PEM',
    });
  });

  it('verify-full checks the chain and the host name', () => {
    expect(checks(optionsFor('?sslmode=verify-full'))).toEqual({ chain: true, hostName: true, ca: 'system' });
    expect(checks(optionsFor('?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem'))).toEqual({
      chain: true,
      hostName: true,
      ca: 'CA PEM',
    });
    expect(checks(optionsFor('?sslrootcert=system'))).toEqual({ chain: true, hostName: true, ca: 'system' });
  });

  it('a client certificate goes with any TLS mode', () => {
    expect(
      optionsFor('?sslmode=verify-full&sslcert=/etc/ssl/client.pem&sslkey=/etc/ssl/client.key'),
    ).toMatchObject({ cert: 'CLIENT CERT PEM', key: 'CLIENT KEY PEM' });
  });

  it('refuses what libpq refuses, and an unknown mode', () => {
    expect(refusal('?sslmode=verify_full')).toMatch(/^sslmode "verify_full" is not one of disable, allow/);
    expect(refusal('?sslmode=no-verify')).toMatch(/pg "no-verify" is sslmode=require here/);
    expect(refusal('?sslmode=verify-ca')).toMatch(/^sslmode=verify-ca needs sslrootcert/);
    expect(refusal('?sslmode=require&sslrootcert=system')).toMatch(
      /sslrootcert=system needs sslmode=verify-full/,
    );
    expect(refusal('?sslmode=require&sslmode=verify-full')).toBe('gives sslmode more than once');
    expect(refusal('?sslmode=require&sslcert=/etc/ssl/client.pem')).toMatch(/sslcert and sslkey together/);
    expect(refusal('?sslmode=prefer&sslnegotiation=direct')).toMatch(/needs sslmode=require or stronger/);
    expect(refusal('?ssl=true')).toMatch(/ssl is pg-specific/);
    expect(refusal('?sslmode=verify-full&uselibpqcompat=true')).toMatch(/uselibpqcompat is not needed/);
    expect(refusal('?sslmode=require&sslrootcert=/missing.pem')).toBe(
      'sslrootcert: cannot read /missing.pem',
    );
  });
});

describe('the connection string pg gets', () => {
  it('has no TLS parameter left for pg to read its own way, and keeps every other part', () => {
    const tls = parseDatabaseTls(
      `${BASE}?sslmode=verify-full&application_name=docs&sslrootcert=/etc/ssl/db-ca.pem&sslnegotiation=direct`,
    );
    const url = new URL(tls.connectionString);
    expect([...url.searchParams.keys()]).toEqual(['application_name']);
    expect(`${url.protocol}//${url.username}:${url.password}@${url.host}${url.pathname}`).toBe(BASE);
    expect(tls.negotiation).toBe('direct');
  });

  it('is the URL as written when it has no TLS parameter', () => {
    const url = 'postgres://bot:p%22w@db/docs?options=-c%20search_path%3Dx';
    expect(parseDatabaseTls(url).connectionString).toBe(url);
  });
});
