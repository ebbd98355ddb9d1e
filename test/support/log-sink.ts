import type { LoggerService } from '@nestjs/common';

/** Every line an app logs, as JSON, for a test to read (createTestApp's `logger`). */
export class LogSink implements LoggerService {
  readonly lines: string[] = [];
  log = (m: unknown) => this.lines.push(JSON.stringify(m));
  error = (m: unknown) => this.lines.push(JSON.stringify(m));
  warn = (m: unknown) => this.lines.push(JSON.stringify(m));
  debug = (m: unknown) => this.lines.push(JSON.stringify(m));
  verbose = (m: unknown) => this.lines.push(JSON.stringify(m));
}
