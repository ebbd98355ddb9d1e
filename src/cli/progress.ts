// The progress bar of a followed job: one line on a terminal, rewritten in place, with the rate and
// the time left; only its last state, without them, where standard error is not a terminal.

/** Finishes the rate is measured over: recent enough to follow a change of pace. */
const WINDOW = 50;
const WIDTH = 30;

export class Progress {
  /** When recent targets ended (ms, the server's clock, from the events' `at`). */
  private readonly ends: number[] = [];
  /** Whether the bar's line is on screen without its newline. */
  private open = false;
  private shown = 0;

  constructor(private readonly tty: boolean = process.stderr.isTTY === true) {}

  /**
   * A target ended at `at` (its event's time; the server's clock, so events replayed from the
   * start of the job do not read as a burst), and the job stands at done of total.
   */
  show(done: number, total: number, failed: number, at: number = Date.now()): void {
    this.ends.push(at);
    if (this.ends.length > WINDOW) this.ends.shift();
    if (!this.tty && done < total) return;
    const filled = total > 0 ? Math.min(WIDTH, Math.round((done / total) * WIDTH)) : WIDTH;
    // Off a terminal, the one line it prints stays as it always was, for whatever reads it.
    const rate = this.tty ? this.rate() : undefined;
    const pace = rate === undefined ? '' : ` ${perSecond(rate)}/s`;
    const eta = rate !== undefined && done < total ? `, ETA ${duration((total - done) / rate)}` : '';
    const line = `[${'#'.repeat(filled)}${' '.repeat(WIDTH - filled)}] ${done}/${total}${failed ? ` (${failed} failed)` : ''}${pace}${eta}`;
    // Blanks over what a longer line before left on screen.
    process.stderr.write(`\r${line.padEnd(this.shown)}`);
    this.shown = line.length;
    this.open = true;
    if (done >= total) this.end();
  }

  /** Ends the bar's line, so that what is printed next starts on a line of its own. */
  end(): void {
    if (!this.open) return;
    process.stderr.write('\n');
    this.open = false;
    this.shown = 0;
  }

  /** Targets a second over the window, once two ends are apart in time. */
  private rate(): number | undefined {
    const span = (this.ends[this.ends.length - 1] - this.ends[0]) / 1000;
    return this.ends.length >= 2 && span > 0 ? (this.ends.length - 1) / span : undefined;
  }
}

function perSecond(rate: number): string {
  if (rate >= 10) return String(Math.round(rate));
  if (rate >= 1) return rate.toFixed(1);
  return rate.toPrecision(2);
}

/** 42s, 3m05s, 2h07m. */
export function duration(seconds: number): string {
  const s = Math.max(1, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
