import { describe, expect, it } from 'vitest';
import { DatabaseTlsError, parseDatabaseTls, SSL_MODES } from '../../src/config/database-tls.js';

const PASSWORD = 'not-a-real-secret';
const BASE = `postgres://bot:${PASSWORD}@db.example.com:5432/docs`;
const tls = (query: string) => parseDatabaseTls(`${BASE}${query}`);

/** The message of the {@link DatabaseTlsError} `url` is refused with; it must not quote the URL. */
function refusal(url: string): string {
  try {
    parseDatabaseTls(url);
  } catch (error) {
    expect(error).toBeInstanceOf(DatabaseTlsError);
    expect((error as Error).name).toBe('DatabaseTlsError');
    const message = (error as Error).message;
    for (const part of [PASSWORD, 'db.example.com', 'bot:']) expect(message).not.toContain(part);
    return message;
  }
  throw new Error('expected the URL to be refused');
}

describe('the mode in effect', () => {
  it('is no TLS at all without any TLS parameter', () => {
    expect(tls('')).toEqual({
      connectionString: BASE,
      mode: undefined,
      rootCert: undefined,
      clientCert: undefined,
      negotiation: undefined,
    });
  });

  it('is the mode given, each of libpq’s', () => {
    for (const mode of SSL_MODES.filter((m) => m !== 'verify-ca'))
      expect(tls(`?sslmode=${mode}`).mode).toBe(mode);
    expect(tls('?sslmode=verify-ca&sslrootcert=/etc/ssl/ca.pem').mode).toBe('verify-ca');
  });

  it('is verify-full for the system’s authorities, and prefer for any other TLS parameter, as libpq', () => {
    expect(tls('?sslrootcert=system')).toMatchObject({ mode: 'verify-full', rootCert: { kind: 'system' } });
    expect(tls('?sslrootcert=/etc/ssl/ca.pem')).toMatchObject({
      mode: 'prefer',
      rootCert: { kind: 'file', path: '/etc/ssl/ca.pem' },
    });
    expect(tls('?sslcert=/c.pem&sslkey=/c.key')).toMatchObject({
      mode: 'prefer',
      clientCert: { certPath: '/c.pem', keyPath: '/c.key' },
    });
    expect(tls('?sslnegotiation=postgres').mode).toBe('prefer');
  });

  it('reads values trimmed, and a blank one as not given', () => {
    expect(tls('?sslmode=%20require%20').mode).toBe('require');
    expect(tls('?sslmode=&sslmode=require').mode).toBe('require');
    expect(tls('?sslmode=').mode).toBeUndefined();
    expect(tls('?sslmode=%20%20&sslmode=require').mode).toBe('require');
  });
});

describe('refusals, each saying what to change and never quoting the URL', () => {
  it('an unknown mode, shortened when long, with a hint for pg’s own spelling', () => {
    expect(refusal(`${BASE}?sslmode=on`)).toBe(
      'sslmode "on" is not one of disable, allow, prefer, require, verify-ca, verify-full',
    );
    expect(refusal(`${BASE}?sslmode=no-verify`)).toContain('(pg "no-verify" is sslmode=require here)');
    expect(refusal(`${BASE}?sslmode=${'x'.repeat(30)}${PASSWORD}`)).toMatch(
      /^sslmode "x{20}…" is not one of/,
    );
    // Shown whole up to 20 characters, and cut after 20.
    expect(refusal(`${BASE}?sslmode=${'y'.repeat(21)}`)).toMatch(/^sslmode "y{20}…" is not one of/);
    expect(refusal(`${BASE}?sslmode=${'z'.repeat(20)}`)).toMatch(/^sslmode "z{20}" is not one of/);
  });

  it('a parameter given twice, a certificate without its key, an unknown negotiation', () => {
    expect(refusal(`${BASE}?sslrootcert=/a.pem&sslrootcert=/b.pem`)).toBe('gives sslrootcert more than once');
    expect(refusal(`${BASE}?sslkey=/c.key`)).toBe(
      'needs sslcert and sslkey together (a client certificate and its key)',
    );
    expect(refusal(`${BASE}?sslmode=require&sslnegotiation=fast`)).toBe(
      'sslnegotiation "fast" is not one of postgres, direct',
    );
  });

  it('combinations libpq refuses', () => {
    expect(refusal(`${BASE}?sslmode=prefer&sslrootcert=system`)).toBe(
      'sslrootcert=system needs sslmode=verify-full (libpq refuses sslmode=prefer with it)',
    );
    expect(refusal(`${BASE}?sslmode=verify-ca`)).toBe(
      'sslmode=verify-ca needs sslrootcert, the file of the CA to trust: against the public CAs, ' +
        'any certificate they issued would pass; use verify-full to check the host name too',
    );
    for (const query of ['?sslnegotiation=direct', '?sslmode=prefer&sslnegotiation=direct']) {
      expect(refusal(`${BASE}${query}`)).toBe('sslnegotiation=direct needs sslmode=require or stronger');
    }
    expect(tls('?sslmode=require&sslnegotiation=direct').negotiation).toBe('direct');
    expect(tls('?sslrootcert=system&sslnegotiation=direct').negotiation).toBe('direct');
  });

  it('pg’s own TLS spellings, which would read differently', () => {
    expect(refusal(`${BASE}?ssl=true`)).toBe(
      'parameter ssl is pg-specific; use sslmode (libpq meaning, see docs/configuration.md)',
    );
    expect(refusal(`${BASE}?sslmode=require&uselibpqcompat=true`)).toMatch(
      /^parameter uselibpqcompat is not needed/,
    );
  });

  it('a URL that does not parse', () => {
    expect(refusal(`postgres://bot:${PASSWORD}@db.example.com:port/docs`)).toBe('is not a valid URL');
  });
});

describe('the connection string pg gets', () => {
  it('keeps the credentials, host, database and other parameters, and drops every TLS one', () => {
    const { connectionString } = tls(
      '?sslmode=verify-full&sslrootcert=/ca.pem&application_name=bot&sslcert=/c.pem&sslkey=/c.key&sslnegotiation=direct',
    );
    expect(connectionString).toBe(`${BASE}?application_name=bot`);
  });

  it('is the URL exactly as written when it has no TLS parameter', () => {
    expect(tls('?application_name=docs agent').connectionString).toBe(`${BASE}?application_name=docs agent`);
  });

  it('drops a blank TLS parameter too', () => {
    expect(tls('?sslmode=&application_name=bot').connectionString).toBe(`${BASE}?application_name=bot`);
  });
});
