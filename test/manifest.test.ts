import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SHORTCUT_CALLBACK_ID } from '../src/features/shortcut/modal.js';
import { START_STEP_CALLBACK_ID, WAIT_STEP_CALLBACK_ID } from '../src/features/workflow-steps/listener.js';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the whole module.
const addFormats = addFormatsModule.default;

const manifestPath = fileURLToPath(new URL('../manifest.yml', import.meta.url));
const schemaPath = fileURLToPath(new URL('./contracts/manifest.schema.1.0.0.json', import.meta.url));
const gatewayPath = fileURLToPath(new URL('../src/slack/gateway.ts', import.meta.url));
const stepsPath = fileURLToPath(new URL('../src/slack/function-steps.ts', import.meta.url));
const sessionsPath = fileURLToPath(new URL('../src/delivery/sessions.ts', import.meta.url));
const listingPath = fileURLToPath(new URL('../src/slack/message-listing.ts', import.meta.url));

/** The parts of the manifest these tests read; the schema check covers the rest. */
interface Manifest {
  display_information?: { name: string };
  features?: {
    app_home?: {
      home_tab_enabled?: boolean;
      messages_tab_enabled?: boolean;
      messages_tab_read_only_enabled?: boolean;
    };
    shortcuts?: { name: string; type: string; callback_id: string; description: string }[];
    slash_commands?: { command: string; url?: string; should_escape?: boolean }[];
  };
  oauth_config?: { scopes?: { bot?: string[] } };
  settings?: {
    event_subscriptions?: { request_url?: string; bot_events?: string[] };
    interactivity?: { is_enabled: boolean; request_url?: string };
    socket_mode_enabled?: boolean;
    org_deploy_enabled?: boolean;
    function_runtime?: string;
  };
  functions?: Record<string, { input_parameters: Record<string, { type: string; is_required?: boolean }> }>;
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

/**
 * Bot scopes each Slack Web API method needs. Methods on a public and a private channel need
 * both variants of the scope; an empty list means the method needs no scope.
 */
const SCOPES_BY_METHOD: Readonly<Record<string, readonly string[]>> = {
  'chat.postMessage': ['chat:write'],
  'chat.update': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'reactions.add': ['reactions:write'],
  'reactions.remove': ['reactions:write'],
  'conversations.replies': ['channels:history', 'groups:history'],
  // Also on a direct message: the requester's DM, read back after a crash.
  'conversations.history': ['channels:history', 'groups:history', 'im:history'],
  'conversations.info': ['channels:read', 'groups:read'],
  'conversations.open': ['im:write'],
  'users.info': ['users:read'],
  'views.open': [],
  'views.publish': [],
  // Workflow Builder steps' answers need no scope.
  'functions.completeSuccess': [],
  'functions.completeError': [],
  'assistant.threads.setStatus': ['assistant:write'],
  'assistant.threads.setTitle': ['assistant:write'],
  'assistant.threads.setSuggestedPrompts': ['assistant:write'],
  // Thread sessions need chat:write; Slack adds assistant:write to apps declared agents.
  'agents.sessions.setStatus': ['chat:write'],
};

function scopesFor(method: string): readonly string[] {
  const scopes = SCOPES_BY_METHOD[method];
  if (!scopes) throw new Error(`no scope known for method ${method}`);
  return scopes;
}

/** The Web API methods a source file calls as `client.<namespace>.<method>(` or `client.apiCall('<method>'`. */
function methodsCalledIn(source: string): string[] {
  const methods = new Set<string>();
  // `client.chat.postMessage(`, and nested namespaces such as `client.agents.sessions.setStatus(`.
  for (const [, path] of source.matchAll(/\bclient\s*\.\s*((?:\w+\s*\.\s*)+\w+)\s*\(/g)) {
    methods.add((path ?? '').replace(/\s+/g, ''));
  }
  for (const [, method] of source.matchAll(/\bclient\s*\.\s*apiCall\s*\(\s*['"`]([\w.]+)['"`]/g)) {
    methods.add(method);
  }
  return [...methods].sort();
}

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

  it('subscribes to mentions and App Home openings as well as channel messages', () => {
    const events = loadManifest().settings?.event_subscriptions?.bot_events ?? [];
    expect(events).toEqual(
      expect.arrayContaining(['app_mention', 'app_home_opened', 'message.channels', 'message.groups']),
    );
  });

  it('declares the message shortcut with the callback_id the app listens for', () => {
    const shortcuts = loadManifest().features?.shortcuts ?? [];
    const shortcut = shortcuts.find((s) => s.callback_id === SHORTCUT_CALLBACK_ID);
    expect(shortcut, `no shortcut with callback_id ${SHORTCUT_CALLBACK_ID}`).toBeDefined();
    expect(shortcut?.type).toBe('message');
  });

  it("enables the App Home tab, which lists the person's jobs", () => {
    expect(loadManifest().features?.app_home?.home_tab_enabled).toBe(true);
  });

  it('asks for the bot scopes the app uses, and not chat:write.public', () => {
    const scopes = loadManifest().oauth_config?.scopes?.bot ?? [];
    expect(scopes).toEqual(
      expect.arrayContaining([
        'commands',
        'app_mentions:read',
        'chat:write',
        'channels:history',
        'groups:history',
        'reactions:write',
        'users:read',
      ]),
    );
    expect(scopes).not.toContain('chat:write.public');
  });

  it('is an agent app (agent messaging) that hears about stops and the Messages tab’s context', () => {
    const manifest = loadManifest();
    expect(manifest.features).toHaveProperty('agent_view.agent_description');
    expect(manifest.features).not.toHaveProperty('assistant_view');
    expect(manifest.settings?.event_subscriptions?.bot_events).toEqual(
      expect.arrayContaining(['agent_session_stopped', 'app_context_changed', 'app_home_opened']),
    );
  });

  it('asks for the scope of every Web API method the gateway (with its listings), the agent sessions and the steps call', () => {
    const methods = [gatewayPath, listingPath, sessionsPath, stepsPath].flatMap((path) =>
      methodsCalledIn(readFileSync(path, 'utf8')),
    );
    expect(methods).toContain('agents.sessions.setStatus');
    expect(methods).toContain('functions.completeSuccess');
    // Guards the regex: if it stopped matching, the loop below would check nothing.
    expect(methods).toContain('chat.postMessage');
    expect(methods).toContain('conversations.replies');
    const scopes = loadManifest().oauth_config?.scopes?.bot ?? [];
    for (const method of methods) {
      for (const scope of scopesFor(method)) {
        expect(scopes, `${method} needs the ${scope} bot scope`).toContain(scope);
      }
    }
  });

  it('declares the Workflow Builder steps the app listens for, run by the app itself', () => {
    const manifest = loadManifest();
    expect(Object.keys(manifest.functions ?? {}).sort()).toEqual(
      [START_STEP_CALLBACK_ID, WAIT_STEP_CALLBACK_ID].sort(),
    );
    expect(manifest.settings?.event_subscriptions?.bot_events).toContain('function_executed');
    // Workflow Builder lists an app's steps only when it is deployed to the organisation.
    expect(manifest.settings?.org_deploy_enabled).toBe(true);
    expect(manifest.settings?.function_runtime).toBe('remote');
    const start = manifest.functions?.[START_STEP_CALLBACK_ID]?.input_parameters ?? {};
    expect(start.instruction).toMatchObject({ type: 'string', is_required: true });
    expect(start.channel_id).toMatchObject({ type: 'slack#/types/channel_id', is_required: true });
    // The verified person who used the workflow; "On behalf of" only where the operator allows it.
    expect(start.user_context).toMatchObject({ type: 'slack#/types/user_context' });
    expect(start.user_id).toMatchObject({ type: 'slack#/types/user_id', is_required: false });
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

describe('the method-to-scope check', () => {
  it('finds client calls, and fails on a method with no known scope', () => {
    const source =
      'await client.chat.postMessage({});\nawait client.conversations\n  .kick({});\nclient.agents.sessions.setStatus({});';
    const methods = methodsCalledIn(source);
    expect(methods).toEqual(['agents.sessions.setStatus', 'chat.postMessage', 'conversations.kick']);
    expect(() => methods.map(scopesFor)).toThrow('no scope known for method conversations.kick');
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
