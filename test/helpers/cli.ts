import { main } from '../../main/cli/main.ts';

/** Runs the CLI's `main` in this process, collecting what it prints and its exit status. */
export async function cli(dataDir: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['--data', dataDir, ...args], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The revision of a project's saved storyboard, as `storyboard show --json` prints it: what an edit is made from. */
export async function storyboardRevision(dataDir: string, project: string): Promise<string> {
  return String(JSON.parse((await cli(dataDir, 'storyboard', 'show', project, '--json')).out).revision);
}

export const ENQUEUE = ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1'];
