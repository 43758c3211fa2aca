import { main } from '../../main/cli/main.ts';

/** Runs the CLI's `main` in this process, collecting what it prints and its exit status. */
export async function cli(dataDir: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['--data', dataDir, ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

export const ENQUEUE = ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1'];
