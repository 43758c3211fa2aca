import { createHash } from 'node:crypto';
import { send, startFake, type FakeServer } from '../fakes/server.ts';

/** npm's integrity string for a tarball (the lockfile's and a packument's `dist.integrity`). */
export function integrityOf(tarball: Buffer): string {
  return `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
}

/**
 * An npm registry on 127.0.0.1 holding one version of one package: its packument (the registry API's
 * GET /<name>) and its tarball. npm uses it through its registry setting (npm_config_registry).
 */
export async function startRegistry(name: string, version: string, tarball: Buffer): Promise<FakeServer> {
  const file = `/${name}/-/${name}-${version}.tgz`;
  const registry: FakeServer = await startFake((req, res) => {
    if (req.path === `/${name}`) {
      const dist = { tarball: `${registry.url}${file}`, integrity: integrityOf(tarball) };
      return send(res, 200, { name, 'dist-tags': { latest: version }, versions: { [version]: { name, version, dist } } });
    }
    if (req.path === file) return send(res, 200, tarball);
  });
  return registry;
}
