import { int } from './knob';

// The knobs of change tracking and monitors (SCHEMA's section `monitors`; their limits per caller
// class are in `limits.<class>`).

export const MONITOR_KNOBS = {
  historyVersions: int(
    { env: 'SIFT_HISTORY_VERSIONS', default: 10, min: 1, max: 1000 },
    "versions of a page kept in a caller's history (format `changes`), oldest forgotten first",
  ),
  historyTtlS: int(
    { env: 'SIFT_HISTORY_TTL_S', default: 30 * 86400, min: 60 },
    "a page's history is forgotten this long (s) after it was last fetched with `changes`, and a page fetched outside a job leaves the search index as long after its last fetch (30 days)",
  ),
  monitorTickMs: int(
    { env: 'SIFT_MONITOR_TICK_MS', default: 1000, min: 10, max: 60_000 },
    'how often (ms) each instance looks for monitors whose run is due',
  ),
};
