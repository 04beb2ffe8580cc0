import path from 'node:path';

/** Where `npm start` and the demo scenarios keep their state between runs, in this repository (git-ignored). */
export const DEMO_DATA_DIR = path.resolve(__dirname, '..', '..', '.data');
export const DEMO_DB_FILE = path.join(DEMO_DATA_DIR, 'temporal.sqlite');
