import { spawn } from 'node:child_process';
import { startStack } from './lib/stack';
async function main() {
  const stack = await startStack({ providerKinds: ['payments'] });
  for (const args of [['--import', 'tsx', 'examples/worker.ts'], ['--cpu-prof', '--cpu-prof-dir=/tmp/wprof', '--import', 'tsx', 'examples/worker.ts']]) {
    const t = performance.now();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...stack.workerEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    await new Promise<void>((resolve) => child.stdout!.on('data', (d) => { out += d; if (out.includes('worker-ready')) resolve(); }));
    console.log('ready', Math.round(performance.now() - t));
    child.kill('SIGINT');
    await new Promise((r) => child.once('exit', r));
  }
  await stack.stop();
}
main();
