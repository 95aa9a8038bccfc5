#!/usr/bin/env node
/** `smarter-worker`: see worker-main.ts. */
import { exitFatal, exitFlushed } from '../lib/logger.js';
import { main } from './worker-main.js';

main(process.argv.slice(2)).then(exitFlushed, (err: unknown) => exitFatal('smarter-worker', err));
