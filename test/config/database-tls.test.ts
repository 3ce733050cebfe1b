import { describe, expect, it } from 'vitest';
import { DatabaseTlsError, parseDatabaseTls, SSL_MODES, tlsOptions } from '../../src/config/database-tls.js';

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

/** The TLS options of `BASE` with `query`, certificate files read from {@link PEM}. */
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
const optionsRefusal = (query: string) => {
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
    expect(optionsRefusal('?sslmode=verify_full')).toMatch(
      /^sslmode "verify_full" is not one of disable, allow/,
    );
    expect(optionsRefusal('?sslmode=no-verify')).toMatch(/pg "no-verify" is sslmode=require here/);
    expect(optionsRefusal('?sslmode=verify-ca')).toMatch(/^sslmode=verify-ca needs sslrootcert/);
    expect(optionsRefusal('?sslmode=require&sslrootcert=system')).toMatch(
      /sslrootcert=system needs sslmode=verify-full/,
    );
    expect(optionsRefusal('?sslmode=require&sslmode=verify-full')).toBe('gives sslmode more than once');
    expect(optionsRefusal('?sslmode=require&sslcert=/etc/ssl/client.pem')).toMatch(
      /sslcert and sslkey together/,
    );
    expect(optionsRefusal('?sslmode=prefer&sslnegotiation=direct')).toMatch(
      /needs sslmode=require or stronger/,
    );
    expect(optionsRefusal('?ssl=true')).toMatch(/ssl is pg-specific/);
    expect(optionsRefusal('?sslmode=verify-full&uselibpqcompat=true')).toMatch(
      /uselibpqcompat is not needed/,
    );
    expect(optionsRefusal('?sslmode=require&sslrootcert=/missing.pem')).toBe(
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
