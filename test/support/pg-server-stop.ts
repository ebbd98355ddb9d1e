import type { ThrowawayCluster } from './pg-cluster';

/** Jest's global teardown: stops the server pg-server.ts started, if it started one. */
export default function teardown(): void {
  (globalThis as { siftPgServer?: ThrowawayCluster }).siftPgServer?.destroy();
}
