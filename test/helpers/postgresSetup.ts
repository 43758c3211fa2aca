import type { TestProject } from 'vitest/node';
import { ClusterUnavailable, startCluster } from './pgCluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's PostgreSQL cluster: its administrator address, or why it could not start. */
    postgres: { adminUrl: string; bin: string } | { unavailable: string };
  }
}

/** One throwaway PostgreSQL cluster for the whole test run, shared by every worker, stopped and removed at the end. */
export default async function setup(project: TestProject): Promise<() => void> {
  let cluster;
  try {
    cluster = await startCluster();
  } catch (err) {
    if (!(err instanceof ClusterUnavailable)) throw err;
    const said = `PostgreSQL could not start (${err.message}): the PostgreSQL tests were skipped`;
    project.provide('postgres', { unavailable: err.message });
    console.warn(said);
    return () => console.warn(said);
  }
  const started = cluster;
  project.provide('postgres', { adminUrl: started.url(), bin: started.bin });
  // A run ended by an uncaught error may skip the teardown; the cluster goes with the process either way.
  const onExit = () => started.stop();
  process.once('exit', onExit);
  return () => {
    process.off('exit', onExit);
    started.stop();
  };
}
