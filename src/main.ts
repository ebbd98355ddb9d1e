import './tuning/threadpool';
import './tuning/lazy-intl';
import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import {
  AppConfig,
  ConfigError,
  DEV_TOKEN,
  databaseName,
  exposureProblem,
  loadConfig,
} from './config/app-config';
import type { Server } from 'node:http';
import { configureApp } from './app.setup';
import { Stopping } from './common/stopping';
import { FileLock, FileLockBusy } from './dcache/file-lock';
import { RunnerService } from './runner/runner.service';
import { WebhookService } from './webhooks/webhook.service';

/** Nest's start-up chatter (a line per module and per route) is debug; the rest as logged. */
class QuietStartLogger extends ConsoleLogger {
  private static readonly STARTUP = new Set([
    'InstanceLoader',
    'RoutesResolver',
    'RouterExplorer',
    'NestFactory',
    'NestApplication',
  ]);

  override log(message: unknown, context?: string): void {
    if (context && QuietStartLogger.STARTUP.has(context)) super.debug(message, context);
    else super.log(message, context);
  }
}

/** Starts the server with the configuration from the environment. */
export async function serve(): Promise<void> {
  // V8 lets the heap grow to up to four times what survived the last full collection before it
  // collects again. A batch run promotes a steady trickle of page strings, so the heap would climb
  // to 150 MB over 40 MB live; 1.3 times keeps a 10,000-target job's peak at 197-198 MB against
  // 206-207 at 1.5, with no CPU per target to tell apart (bench/batch). The setting is read at
  // every collection, so it applies from here on.
  setFlagsFromString('--heap-growing-percent=30');
  // undici parses responses with llhttp compiled to WebAssembly. When a batch job starts, V8
  // recompiles its parser (one very large function) with its optimizing compiler on a helper
  // thread, which holds 25-35 MB of memory for that second: most of a big job's peak. The
  // baseline compiler's code is what runs until then; kept, the peak is that much lower.
  setFlagsFromString('--liftoff-only');
  // Validate before Nest starts, so a bad value is one clear line, not a stack trace.
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`sift: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const exposed = exposureProblem(config);
  if (exposed) {
    console.error(`sift: start-up refused: ${exposed}`);
    process.exit(1);
  }
  // One server per SQLite file, checked before anything opens, migrates or reconciles it.
  if (!config.databaseUrl && config.dbPath !== ':memory:') {
    let lock: FileLock;
    try {
      lock = FileLock.take(config.dbPath, config.port);
    } catch (err) {
      if (err instanceof FileLockBusy) {
        console.error(`sift: start-up refused: ${err.message}`);
        process.exit(1);
      }
      throw err;
    }
    // The listener also keeps the lock's handle alive for as long as the process runs.
    process.once('exit', () => lock.release());
  }
  const levels: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug'];
  const upTo = levels.indexOf(config.logLevel === 'info' ? 'log' : (config.logLevel as LogLevel));
  // One JSON object a line: what log collectors read without a parser of their own.
  const logger = new QuietStartLogger('sift', { json: true, logLevels: levels.slice(0, upTo + 1) });
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger,
    abortOnError: false,
  });
  configureApp(app);
  await app.listen(config.port, config.host);
  const log = new Logger('sift');
  stopOnSignal(app, log, config.shutdownGraceMs);
  log.log(`listening on ${config.host}:${config.port}, database ${databaseName(config)}`);
  if (config.tokens.some((t) => t.token === DEV_TOKEN)) {
    log.warn(
      `the development token "${DEV_TOKEN}" is accepted: set SIFT_TOKENS in .env before exposing sift`,
    );
  }
}

/** How long past SIFT_SHUTDOWN_GRACE_MS the process may take to close before it ends regardless. */
const CLOSE_MARGIN_MS = 2000;

/**
 * SIGTERM, SIGINT or SIGHUP: every open stream gets its last message and ends (see Stopping); the
 * app closes (the runner gives targets in flight SIFT_SHUTDOWN_GRACE_MS, then returns the rest to
 * their jobs, and the listener closes); requests still open when the grace ends are cut; then one
 * line says what became of the work, and the process ends by the signal as a default handler
 * would. Whatever clients or work remain, it ends CLOSE_MARGIN_MS after the grace. A second signal
 * ends it at once.
 */
function stopOnSignal(app: NestExpressApplication, log: Logger, graceMs: number): void {
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  const stop = async (signal: NodeJS.Signals) => {
    for (const s of signals) process.removeListener(s, stop);
    const started = Date.now();
    const runner = app.get(RunnerService, { strict: false });
    const webhooks = app.get(WebhookService, { strict: false });
    const server = app.getHttpServer() as Server;
    app.get(Stopping).stop();
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    const bound = setTimeout(() => {
      log.error(`stopping on ${signal} took over ${graceMs + CLOSE_MARGIN_MS} ms: ending now`);
      process.kill(process.pid, signal);
    }, graceMs + CLOSE_MARGIN_MS);
    cut.unref();
    bound.unref();
    try {
      await app.close();
      const r = runner.stopReport ?? { inFlight: 0, finished: 0, returned: 0 };
      log.log(
        `stopped on ${signal} in ${Date.now() - started} ms: of ${r.inFlight} targets in flight ${r.finished} finished and ` +
          `${r.returned} went back to their jobs as pending; ${webhooks.stoppedSending} webhook deliveries ` +
          'being sent will be sent again; the listener, extraction workers and database are closed',
      );
    } catch (err) {
      log.error(`stopping on ${signal} failed: ${(err as Error).message}`);
    }
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.once(s, stop);
}

export function main(): void {
  serve().catch((err: Error) => {
    console.error(`sift: start-up failed: ${err.message}`);
    process.exit(1);
  });
}

if (require.main === module) main();
