import type { Command } from '../context.ts';
import { cancel, reconcileCommand, resolve } from './decide.ts';
import { draft } from './draft.ts';
import { enqueue } from './enqueue.ts';
import { events, spend, tasks, unknown } from './inspect.ts';
import { budget, estimate, generate, render, storyboard } from './pipeline.ts';
import { storyboardCheapest } from './cheapest.ts';
import { serve } from './serve.ts';
import { simulator } from './simulator.ts';
import { pick, takes } from './takes.ts';
import { team } from './team.ts';
import { worker } from './worker.ts';

export const COMMANDS: Record<string, Command> = {
  enqueue,
  worker,
  tasks,
  unknown,
  reconcile: reconcileCommand,
  resolve,
  cancel,
  spend,
  events,
  simulator,
  storyboard: (argv, ctx) => (argv[0] === 'cheapest' ? storyboardCheapest(argv.slice(1), ctx) : storyboard(argv, ctx)),
  draft,
  estimate,
  generate,
  render,
  takes,
  pick,
  budget,
  serve,
  team,
};

export const HELP = `studio: generate media with paid APIs without ever paying twice

usage: studio [--data DIR] [--db URL] [--media DIR] <command> [options]

  enqueue --project P --kind image|clip|speech --provider ID --model M --input JSON [--depends-on ID,...] [--max-attempts N]
                            add a task; prints its id
  worker [--until-idle]     run tasks (until nothing is left that can move without you)
  tasks [--json] [--project P] [--status S]
                            list tasks
  unknown [--json]          tasks whose outcome nobody can know, waiting for your decision
  reconcile ID [--json]     requests at the provider that may be the one an unknown outcome sent
  resolve ID --adopt REQUEST_ID | --resubmit [--even-if-running] | --give-up
                            decide an unknown outcome (a resubmit while the request may still be
                            running at the provider needs --even-if-running)
  cancel ID                 cancel unfinished work (a submitted request is cancelled at the provider too)
  spend [--project P] [--json]
                            what each project has cost
  events ID                 the history of one task
  simulator [--port N]      run the bundled provider simulator on 127.0.0.1

  storyboard create|edit PROJECT --file F [--revision N], storyboard show PROJECT [--json]
                            a project's scenes, from a JSON file; an edit made from an older
                            revision than the saved one is refused (exit 2)
  storyboard cheapest PROJECT [--scene S] [--revision N]
                            move every scene (or one) whose model another provider you have a
                            key for makes for less to that provider; buys nothing; an edit made
                            since revision N is refused (exit 2)
  draft PROJECT "idea..." [--scenes N] [--with simulator|openai] [--estimate] [--replace] [--again]
                            a storyboard drafted from an idea by a text model (one paid step;
                            the same idea again uses a finished draft at no charge; one that failed
                            paid is bought again only with --again); --estimate prices it only;
                            --show-answer TASK prints what the model answered; exit 3: still running
  estimate PROJECT [--json] what a Generate would make and cost, step by step
  generate PROJECT [--new-take SCENE] [--rebuy-lost] [--confirm-unpriced]
                            enqueue what the storyboard needs that the project does not have;
                            --new-take SCENE makes a new take of it, of its clip only with
                            --only clip (the still kept), its still with --only image; --seed N
                            sends it with that seed; --variations N (1-8) makes N takes at once;
                            --rebuy-lost buys again a step whose paid result was lost;
                            --confirm-unpriced goes ahead, under a budget, with steps of unknown price
  render PROJECT [--preset P]
                            render again, each scene from its picked take; --preset 1080p, 4k,
                            vertical, square, webm or gif-preview exports it, named after the project
  takes PROJECT [SCENE] [--json]
                            every take of each scene: prompt, provider, seed, cost, and which is picked
  pick PROJECT SCENE TAKE   the take of a scene that goes into the render (buys nothing)
  budget PROJECT AMOUNT|none
  serve [--port N] [--no-open]
                            run the studio for a browser on 127.0.0.1; prints the address, and opens
                            it in your browser where there is a desktop (not with --no-open)

  team init                 create the studio's tables in an empty team database (PostgreSQL)
  team status               the team database, its schema, and the machines with a studio on it
  team push PROJECT         move a project of this data folder's database (tasks, history, takes, files)
                            into the team database; refused while a step of it is in flight or unknown.
                            Here it then takes no more work

--data DIR defaults to the desktop app's data folder; STUDIO_DATA_DIR overrides it.
--db postgres://user:password@host:5432/studio keeps the tasks in a team database shared by several
machines; else STUDIO_DATABASE_URL, else settings team.databaseUrl; without any, the data folder's own.
Each machine goes by a name there: STUDIO_MACHINE_NAME or settings team.machineName (default: the
computer's name); machines are told apart by the id kept in their data folders (machine-id).
--media DIR is the media folder the team shares, where this machine mounts it (else STUDIO_MEDIA_DIR, else
settings team.mediaDir): saved files go there, and a file another machine saved is found there.`;
