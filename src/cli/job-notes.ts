// What the CLI tells about a followed job when it stops following it: how the job ended, what
// Ctrl-C left behind, what a server that stopped left behind, and how to go on in each case.
import { CliError, EXIT, type Unreachable } from './client';
import type { ResultsOut } from './results-out';

export interface JobView {
  id: string;
  status: string;
  /** The job's error, such as server_restarted; null (or absent from an older server) when none. */
  error?: string | null;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  targets_cancelled?: number;
  on_restart?: string;
}

/** The server said it is stopping (its event stream's last message, `event: stopping`). */
export class ServerStopping extends CliError {
  constructor(readonly retryAfterS: number | undefined) {
    super('the server is stopping', EXIT.error);
  }
}

/** What a restart of the server does to a live job, by its on_restart (SPEC "Restart"). */
const ON_RESTART: Record<string, string> = {
  fail: 'is failed (server_restarted)',
  retry: 'is run again from the start',
  resume: 'is resumed (its finished targets kept)',
};

/** "is failed (server_restarted), as its on_restart is fail"; nothing for a policy unknown here. */
function restartFate(job: JobView): string | undefined {
  const fate = job.on_restart === undefined ? undefined : ON_RESTART[job.on_restart];
  return fate && `${fate}, as its on_restart is ${job.on_restart}`;
}

/** The job errors a restart leaves, and what happened. */
const RESTART_ERRORS: Record<string, string> = {
  server_restarted: 'the server restarted',
  instance_lost: 'the instance running it stopped',
};

const say = (lines: string[]) => console.error(lines.map((l) => `sift: ${l}`).join('\n'));

/** One line on how the job ended, its error with it; exit code 3 unless every target is done. */
export function ended(view: JobView): void {
  const error = view.error ? ` (${view.error})` : '';
  const cancelled = view.targets_cancelled ? `, ${view.targets_cancelled} cancelled` : '';
  const failed = view.targets_failed ? `, ${view.targets_failed} failed` : '';
  console.error(
    `job ${view.id} ${view.status}${error}: ${view.targets_done}/${view.targets_total} finished${failed}${cancelled}`,
  );
  const restarted = RESTART_ERRORS[view.error ?? ''];
  if (restarted)
    say([
      `${restarted} while job ${view.id} was live, and its on_restart is ${view.on_restart ?? 'fail'}; ` +
        `run its failed targets again with: sift retry ${view.id}`,
    ]);
  if (view.status !== 'done') process.exitCode = EXIT.partial;
}

/** What an interrupted command leaves: what it wrote, and how to go on or stop the job. */
export function interrupted(job: JobView, out: ResultsOut | undefined, live: boolean): void {
  const wrote = out ? `${out.summary}; ` : '';
  const flag = out?.flag ?? '';
  if (live) {
    const fate = restartFate(job);
    say([
      `interrupted; ${wrote}job ${job.id} goes on running on the server`,
      ...(fate ? [`if the server restarts before job ${job.id} ends, it ${fate}`] : []),
      `follow it:      sift watch ${job.id}${flag}`,
      `all results:    sift results ${job.id}${flag}   (once it has ended)`,
      `or cancel it:   sift cancel ${job.id}`,
    ]);
  } else {
    say([`interrupted; ${wrote}job ${job.id} has ended`, `all results:    sift results ${job.id}${flag}`]);
  }
  process.exitCode = EXIT.interrupted;
}

/**
 * The server stopped (it said so, or the connection was cut or refused) while the command followed
 * the job (`following`) or wrote its results: what was written stays, and the command that takes
 * it up again once the server is back. Exit code 1.
 */
export function stopped(
  job: JobView,
  out: ResultsOut | undefined,
  why: ServerStopping | Unreachable,
  following: boolean,
): void {
  const how =
    why instanceof ServerStopping
      ? `it said it was stopping${why.retryAfterS === undefined ? '' : ` (try again in ${why.retryAfterS} s)`}`
      : `lost ${why.a.base}${why.a.from ? ` (${why.a.from})` : ''}: ${why.reason}`;
  const when = following
    ? `while following job ${job.id}`
    : out
      ? `while writing the results of job ${job.id}`
      : `after job ${job.id} ended`;
  const flag = out?.flag ?? '';
  const lines = [`the server stopped ${when}: ${how}`];
  if (out) lines.push(out.summary);
  if (following) {
    const fate = restartFate(job);
    if (fate) lines.push(`when the server starts again, job ${job.id} ${fate}`);
    lines.push(`resume:         sift watch ${job.id}${flag}`);
    lines.push(`all results:    sift results ${job.id}${flag}   (once it has ended)`);
  } else {
    lines.push(`resume:         sift ${out ? 'results' : 'watch'} ${job.id}${flag}`);
  }
  say(lines);
  process.exitCode = EXIT.error;
}
