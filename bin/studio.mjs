#!/usr/bin/env node
// The CLI runs the TypeScript engine directly, so it is the very code the desktop app and the tests run.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../main/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
