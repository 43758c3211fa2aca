// A process that writes numbered lines to a log, for the test of several processes rotating one folder's log at
// once (test/logs.test.ts): node --import tsx logWriter.ts DIR NAME COUNT TAG MAX_BYTES KEEP
import { openLog } from '../../main/logging/logger.ts';

const [dir, name, count, tag, maxBytes, keep] = process.argv.slice(2) as [string, string, string, string, string, string];
const log = openLog({ dir, name, limits: { maxBytes: Number(maxBytes), keep: Number(keep) } });
for (let i = 0; i < Number(count); i++) log.info(`${tag} line ${i} ${'x'.repeat(40)}`);
if (log.problem) throw new Error(log.problem);
