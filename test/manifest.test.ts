import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the whole module.
const addFormats = addFormatsModule.default;

const manifestPath = fileURLToPath(new URL('../manifest.yml', import.meta.url));
const schemaPath = fileURLToPath(new URL('../../shared/slack/manifest.schema.1.0.0.json', import.meta.url));

/** The parts of the manifest these tests read; the schema check covers the rest. */
interface Manifest {
  display_information?: { name: string };
  features?: {
    slash_commands?: { command: string; url?: string; should_escape?: boolean }[];
  };
  oauth_config?: { scopes?: { bot?: string[] } };
  settings?: {
    event_subscriptions?: { request_url?: string; bot_events?: string[] };
    interactivity?: { is_enabled: boolean; request_url?: string };
    socket_mode_enabled?: boolean;
  };
  [key: string]: unknown;
}

function loadManifest(): Manifest {
  return parse(readFileSync(manifestPath, 'utf8')) as Manifest;
}

function compileSchema(): ValidateFunction {
  // The schema is draft-07, which plain Ajv speaks. strict: false because the schema uses
  // keywords Ajv does not know (`regex` on background_color, `_note`).
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')));
}

const validate = compileSchema();

function errorsOf(candidate: unknown): ErrorObject[] {
  return validate(candidate) ? [] : (validate.errors ?? []);
}

describe('manifest.yml', () => {
  it("is valid against Slack's manifest schema", () => {
    const errors = errorsOf(loadManifest());
    expect(errors, JSON.stringify(errors, null, 2)).toEqual([]);
  });

  it('declares the /docs-agent slash command', () => {
    const commands = loadManifest().features?.slash_commands ?? [];
    const command = commands.find((c) => c.command === '/docs-agent');
    expect(command).toBeDefined();
    expect(command?.should_escape).toBe(false);
  });

  it('subscribes to messages in public and private channels, where thread replies arrive', () => {
    const events = loadManifest().settings?.event_subscriptions?.bot_events ?? [];
    expect(events).toEqual(expect.arrayContaining(['message.channels', 'message.groups']));
  });

  it('asks for the bot scopes the app uses, and not chat:write.public', () => {
    const scopes = loadManifest().oauth_config?.scopes?.bot ?? [];
    expect(scopes).toEqual(
      expect.arrayContaining([
        'commands',
        'chat:write',
        'channels:history',
        'groups:history',
        'reactions:write',
      ]),
    );
    expect(scopes).not.toContain('chat:write.public');
  });

  it('points every request URL at POST /slack/events when Socket Mode is off', () => {
    const manifest = loadManifest();
    expect(manifest.settings?.socket_mode_enabled).toBe(false);
    expect(manifest.settings?.interactivity?.is_enabled).toBe(true);
    const urls = [
      ...(manifest.features?.slash_commands ?? []).map((c) => c.url),
      manifest.settings?.event_subscriptions?.request_url,
      manifest.settings?.interactivity?.request_url,
    ];
    expect(urls).toHaveLength(3);
    for (const url of urls) {
      expect(url).toMatch(/^https:\/\/[^/]+\/slack\/events$/);
    }
  });
});

describe('the schema check', () => {
  it('rejects a manifest without display_information', () => {
    const { display_information: _removed, ...rest } = loadManifest();
    const errors = errorsOf(rest);
    expect(errors).toContainEqual(
      expect.objectContaining({ keyword: 'required', params: { missingProperty: 'display_information' } }),
    );
  });

  it('rejects a misspelled top-level key and a slash command without its leading slash', () => {
    const manifest = structuredClone(loadManifest());
    manifest.setting = manifest.settings;
    const command = manifest.features?.slash_commands?.[0];
    if (!command) throw new Error('manifest has no slash command');
    command.command = 'docs-agent';

    const errors = errorsOf(manifest);
    expect(errors).toContainEqual(
      expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'setting' } }),
    );
    expect(errors).toContainEqual(
      expect.objectContaining({ keyword: 'pattern', instancePath: '/features/slash_commands/0/command' }),
    );
  });
});
