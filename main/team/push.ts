import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { studioMedia } from '../config/media.ts';
import { databasePath } from '../config/paths.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { stopPoint } from '../engine/stopPoints.ts';
import type { ProjectMove } from '../domain/project.ts';
import { openTeamDatabase } from '../store/postgres/migrator.ts';
import { insertProject, insertRowsOf, projectByName, projectByPush, taskIds } from '../store/postgres/projectImport.ts';
import type { Sql } from '../store/postgres/sql.ts';
import { mediaSpaceOf } from '../store/sqlite/mediaSpace.ts';
import { settleHome } from '../store/sqlite/databaseHome.ts';
import { projectNamed, projectRows, taskStates } from '../store/sqlite/projectExport.ts';
import { beginMove, dropMove, finishMove, moveOf } from '../store/sqlite/projectMoves.ts';
import { NoStudioHere } from '../studio.ts';
import { placeFile, type FileOutcome } from './pushFiles.ts';
import { outsideReferences, planFiles, pushRefusal, teamRows, type FilePlan } from './pushPlan.ts';
import type { ProjectRows } from '../domain/projectRows.ts';

/** A move that cannot happen as asked; nothing was changed on either side. */
export class PushRefused extends Error {}

/** A move that began and stopped before it finished (a disk, the network): the project stays held here until it is run again. */
export class PushInterrupted extends Error {}

export interface PushRequest {
  name: string;
  dataDir: string;
  teamUrl: string;
  /** The media folder set on this machine (--media, STUDIO_MEDIA_DIR, settings), or null. */
  mediaDir: string | null;
  machine: string;
  now: () => number;
}

export interface PushReport {
  /** pushed: moved now; finished: the team database had it from a push cut short; already: moved before. */
  outcome: 'pushed' | 'finished' | 'already';
  project: string;
  /** The team database, without its password. */
  team: string;
  teamProjectId: number;
  movedAt: number;
  tasks: number;
  events: number;
  /** Where its files are in the team's media folder on this machine. */
  teamMedia: string;
  files: Record<FileOutcome, number>;
  /** Files that moved only as rows (gone, or not the file that was saved), in words. */
  problems: string[];
}

const NAME_TAKEN = 'projects_name_key';

function takenWords(name: string, where: string): string {
  return `the team database ${where} already has a different project called "${name}"; nothing was changed on either side`;
}

/** Holds the project here for the move, judging again in the same write that nothing is in flight. */
function begin(db: Db, project: { id: number; name: string }, team: string, now: number): ProjectMove {
  return db
    .transaction(() => {
      const refusal = pushRefusal(project.name, taskStates(db, project.id));
      if (refusal) throw new PushRefused(refusal);
      return beginMove(db, { projectId: project.id, pushId: randomBytes(12).toString('hex'), team, startedAt: now });
    })
    .immediate();
}

/** What the team database was told: its project's id, and whether this run put it there. */
async function copyRows(sql: Sql, rows: ProjectRows, move: ProjectMove, files: FilePlan[], req: PushRequest, where: string) {
  try {
    return await sql.tx(async (tx) => {
      const found = await projectByPush(tx, move.pushId);
      if (found) return { id: found.id, fresh: false };
      if (await projectByName(tx, rows.project.name)) throw new PushRefused(takenWords(rows.project.name, where));
      const { budget, currency, created_at } = rows.project;
      const projectId = await insertProject(tx, { name: rows.project.name, budget, currency, created_at, push_id: move.pushId, pushed_from: req.machine, pushed_at: req.now() });
      const ids = await taskIds(tx, rows.tasks.length);
      await insertRowsOf(tx, projectId, teamRows(rows, projectId, new Map(rows.tasks.map((t, i) => [t.id, ids[i]!])), files, req.machine));
      return { id: projectId, fresh: true };
    });
  } catch (err) {
    // Another push of this same move, run at the same time, committed first: this one only finishes it. Its refusal
    // would otherwise drop the move here while the team database has the project, and both sides would take work.
    if (err instanceof PushRefused || (err instanceof pg.DatabaseError && err.code === '23505')) {
      const same = await projectByPush(sql, move.pushId);
      if (same) return { id: same.id, fresh: false };
    }
    if (err instanceof pg.DatabaseError && err.code === '23505') {
      throw new PushRefused(
        err.constraint === NAME_TAKEN
          ? takenWords(rows.project.name, where)
          : `the team database ${where} already holds what this project would add (${err.detail ?? err.constraint}); nothing was changed on either side`,
      );
    }
    throw err;
  }
}

function fileWords(plan: FilePlan, outcome: FileOutcome): string | null {
  if (outcome === 'missing') return `task ${plan.taskId}'s file ${plan.index} is not at ${plan.source}: its row moved, and says the file is missing`;
  if (outcome === 'changed') return `task ${plan.taskId}'s file ${plan.index} at ${plan.source} is not the file that was saved (its checksum differs): it was not copied`;
  return null;
}

/**
 * `studio team push`: moves a project from this data folder's database into the team database. The project is
 * held here first (it takes no more work), its files are copied into the team's media folder and checked, and all
 * of its rows go into the team database in one transaction; then the move is marked done here. A move cut short
 * anywhere is finished by running it again: the team database's copy is found by the move's id, never made twice.
 */
export async function pushProject(req: PushRequest): Promise<PushReport> {
  const file = databasePath(req.dataDir);
  if (!existsSync(file)) throw new NoStudioHere(`there is no studio data in ${req.dataDir}; point --data (or STUDIO_DATA_DIR) at the studio's data folder`);
  const db = openDatabase(file);
  try {
    settleHome(db, file);
    const project = projectNamed(db, req.name);
    if (!project) throw new PushRefused(`there is no project "${req.name}" in ${file}`);
    const earlier = moveOf(db, project.id);
    const teamMedia = resolve(req.mediaDir ?? req.dataDir);
    if (earlier?.movedAt != null) {
      const { team, teamProjectId, movedAt } = earlier;
      return { outcome: 'already', project: project.name, team, teamMedia, teamProjectId: teamProjectId!, movedAt, tasks: 0, events: 0, files: counts([]), problems: [] };
    }
    const team = await openTeamDatabase(req.teamUrl);
    try {
      const base = { project: project.name, team: team.where, teamMedia };
      if (!earlier) {
        const refusal = pushRefusal(project.name, taskStates(db, project.id)) ?? outsideReferences(projectRows(db, project.id));
        if (refusal) throw new PushRefused(refusal);
        if (await projectByName(team.sql, project.name)) throw new PushRefused(takenWords(project.name, team.where));
      }
      const move = earlier ?? begin(db, project, team.where, req.now());
      const rows = projectRows(db, project.id);
      const space = mediaSpaceOf(db);
      const local = studioMedia({ dataDir: req.dataDir, configured: req.mediaDir, kind: 'sqlite', space, machine: req.machine });
      const files = planFiles(rows, { resolveHere: local.resolve, teamRoot: teamMedia, dataDir: req.dataDir, space });
      const outcomes: FileOutcome[] = [];
      let copied;
      try {
        for (const plan of files) outcomes.push(await placeFile(plan));
        copied = await copyRows(team.sql, rows, move, files, req, team.where);
      } catch (err) {
        // Refused by the team database in a transaction that left nothing there: the project is this database's again.
        if (err instanceof PushRefused) {
          dropMove(db, project.id, move.pushId);
          throw err;
        }
        throw new PushInterrupted(
          `the move of "${project.name}" stopped before it finished (${(err as Error).message}); the project is held here meanwhile. ` +
            `Once that is mended, run "studio team push ${project.name}" again to finish it`,
        );
      }
      stopPoint('after-team-commit', copied.id, 'project');
      finishMove(db, project.id, copied.id, req.now());
      return {
        ...base,
        outcome: copied.fresh ? 'pushed' : 'finished',
        teamProjectId: copied.id,
        movedAt: moveOf(db, project.id)!.movedAt!,
        tasks: rows.tasks.length,
        events: rows.events.length,
        files: counts(outcomes),
        problems: files.flatMap((plan, i) => fileWords(plan, outcomes[i]!) ?? []),
      };
    } finally {
      await team.end();
    }
  } finally {
    db.close();
  }
}

function counts(outcomes: FileOutcome[]): Record<FileOutcome, number> {
  const all: Record<FileOutcome, number> = { copied: 0, there: 0, missing: 0, changed: 0, deleted: 0 };
  for (const o of outcomes) all[o] += 1;
  return all;
}
