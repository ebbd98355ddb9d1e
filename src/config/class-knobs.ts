import { int, text } from './knob';
import { parseProxyNames } from './parsers';

// The limits of each caller class (SCHEMA's sections `limits.fleet` and `limits.restricted`).

const KiB = 1024;
const MiB = 1024 * KiB;

export const FLEET_LIMITS = {
  maxTargets: int(
    { env: 'SIFT_FLEET_MAX_TARGETS', default: 10_000, min: 1, max: 1_000_000 },
    'targets in one batch job',
  ),
  maxLiveJobs: int(
    { env: 'SIFT_FLEET_MAX_LIVE_JOBS', default: 32, min: 1 },
    'live jobs per caller before 429 `too_many_jobs`',
  ),
  outputCap: int(
    { env: 'SIFT_FLEET_OUTPUT_CAP', default: 2 * MiB, min: 1, bytes: true },
    'bytes of content per result',
  ),
  fetchConcurrency: int(
    { env: 'SIFT_FLEET_FETCH_CONCURRENCY', default: 64, min: 1, max: 100_000 },
    'fetches in flight per caller (`/v1/fetch`, `/v1/map`, `/v2/scrape`, `/v2/map`, MCP `fetch` and `map`) before 429 `too_many_requests`',
  ),
  maxStreams: int(
    { env: 'SIFT_FLEET_MAX_STREAMS', default: 32, min: 1, max: 100_000 },
    'open event or NDJSON streams per caller before 429 `too_many_requests`',
  ),
  renderConcurrency: int(
    { env: 'SIFT_FLEET_RENDER_CONCURRENCY', default: 4, min: 1, max: 1024 },
    'renders in flight per caller before 429 `too_many_requests`',
  ),
  proxies: text(
    { env: 'SIFT_FLEET_PROXIES', default: '*', read: parseProxyNames },
    'the SIFT_PROXIES names these callers may use (comma-separated), `*` for every one, `none` for none',
  ),
  monitors: int(
    { env: 'SIFT_FLEET_MONITORS', default: 100, min: 0, max: 100_000 },
    'monitors per caller before 429 `too_many_monitors`',
  ),
  monitorMinIntervalS: int(
    { env: 'SIFT_FLEET_MONITOR_MIN_INTERVAL_S', default: 60, min: 1 },
    "the shortest time (s) between a monitor's runs (400 for a schedule more often)",
  ),
};

export const RESTRICTED_LIMITS = {
  maxTargets: int(
    { env: 'SIFT_RESTRICTED_MAX_TARGETS', default: 1000, min: 1, max: 1_000_000 },
    'targets in one batch job',
  ),
  maxLiveJobs: int(
    { env: 'SIFT_RESTRICTED_MAX_LIVE_JOBS', default: 4, min: 1 },
    'live jobs per caller before 429 `too_many_jobs`',
  ),
  outputCap: int(
    { env: 'SIFT_RESTRICTED_OUTPUT_CAP', default: 256 * KiB, min: 1, bytes: true },
    'bytes of content per result',
  ),
  fetchConcurrency: int(
    { env: 'SIFT_RESTRICTED_FETCH_CONCURRENCY', default: 8, min: 1, max: 100_000 },
    'fetches in flight per caller (`/v1/fetch`, `/v1/map`, `/v2/scrape`, `/v2/map`, MCP `fetch` and `map`) before 429 `too_many_requests`',
  ),
  maxStreams: int(
    { env: 'SIFT_RESTRICTED_MAX_STREAMS', default: 4, min: 1, max: 100_000 },
    'open event or NDJSON streams per caller before 429 `too_many_requests`',
  ),
  renderConcurrency: int(
    { env: 'SIFT_RESTRICTED_RENDER_CONCURRENCY', default: 1, min: 1, max: 1024 },
    'renders in flight per caller before 429 `too_many_requests`',
  ),
  proxies: text(
    { env: 'SIFT_RESTRICTED_PROXIES', default: '', read: parseProxyNames },
    'the SIFT_PROXIES names these callers may use (comma-separated), `*` for every one, `none` for none; none by default',
  ),
  monitors: int(
    { env: 'SIFT_RESTRICTED_MONITORS', default: 5, min: 0, max: 100_000 },
    'monitors per caller before 429 `too_many_monitors`',
  ),
  monitorMinIntervalS: int(
    { env: 'SIFT_RESTRICTED_MONITOR_MIN_INTERVAL_S', default: 900, min: 1 },
    "the shortest time (s) between a monitor's runs (400 for a schedule more often)",
  ),
};
