import { config as loadDotEnv } from 'dotenv';
import { startApp } from './app.js';
import { ConfigError, readConfig } from './config/config.js';
import { createRedactor, secretsOfEnv } from './logging/logger.js';

/** Hard limit for shutdown; platforms send SIGKILL 30 s after SIGTERM, we aim well inside. */
const EXIT_DEADLINE_MS = 9_500;

async function main(): Promise<void> {
  // A .env file in the working directory fills in what the environment does not set.
  loadDotEnv({ quiet: true });
  let config: ReturnType<typeof readConfig>;
  try {
    config = readConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      // Problems name variables and never quote values; masked anyway, as every other line is.
      const redact = createRedactor(secretsOfEnv(process.env));
      process.stderr.write(
        `docs-agent cannot start. ${redact(error.message)}\nSee docs/configuration.md for every variable.\n`,
      );
      process.exit(1);
    }
    throw error;
  }

  // A signal while starting is kept and acted on once the app can stop: until a handler is set,
  // Node's default for SIGTERM ends the process at once, with none of the shutdown run.
  let shutdown: ((signal: string | undefined) => void) | undefined;
  let pending: string | undefined;
  const onSignal = (signal: string) => {
    if (shutdown) shutdown(signal);
    else pending ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  const app = await startApp(config);
  // Last line of defence: nothing that escapes a callback may print an unredacted dump. A lost
  // rejection is logged and the bot keeps serving (every piece of work is recorded in the store
  // and retried); an uncaught exception leaves state unknown, so the process exits and the
  // platform restarts it.
  process.on('unhandledRejection', (error) =>
    app.logger.error('a promise rejected with no handler', { error }),
  );
  process.on('uncaughtException', (error) => {
    app.logger.error('uncaught exception; exiting', { error });
    process.exit(1);
  });
  let signalled = false;
  /** Stops the app and exits: 0 on a signal, 1 when the app stopped by itself (`failed`). */
  shutdown = (signal: string | undefined) => {
    if (signalled) return;
    signalled = true;
    if (signal) app.logger.info('signal received', { signal });
    setTimeout(() => {
      app.logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, EXIT_DEADLINE_MS).unref();
    app.stop().then(
      () => process.exit(signal ? 0 : 1),
      (error) => {
        app.logger.error('shutdown failed', { error });
        process.exit(1);
      },
    );
  };
  if (pending) shutdown(pending);
  // Slack refused the app token on a reconnect: the app is already stopping and logged why; the
  // exit code tells the platform to restart it (with the new SLACK_APP_TOKEN, once it is set).
  void app.failed.then(() => shutdown?.(undefined));
}

main().catch((error: unknown) => {
  const redact = createRedactor(secretsOfEnv(process.env));
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`docs-agent failed to start: ${redact(message)}\n`);
  process.exit(1);
});
