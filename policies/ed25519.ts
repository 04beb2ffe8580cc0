/**
 * The Ed25519 implementation that signed decisions are verified with, in a module of its own so that workers
 * can preload it into the workflow sandbox (workers/workflow-preload.ts). In a reusable V8 context every other
 * module is evaluated once per workflow, so each workflow built the curve's precomputed base-point table again on
 * its first verification: about 55 ms of every approval's workflow task on a 2-core machine, against 2–5 ms for
 * the verification itself once the table exists.
 */
export { ed25519 } from '@noble/curves/ed25519';
