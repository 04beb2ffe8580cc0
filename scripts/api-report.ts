/**
 * `npm run api:report`: the package's public surface, one API Extractor report per entry point
 * (api-reports/retrysafe.api.md, api-reports/retrysafe-worker.api.md, …), written from the built declarations of
 * dist/. The reports are committed and read in review like code: a change to what a team can import shows there.
 *
 * `npm run api:check` (part of `npm test`) writes nothing: it fails, naming each entry point, when the surface differs
 * from its committed report (API Extractor's production mode), so a change to the surface cannot land without its
 * report. The fix is `npm run api:report` and a look at the diff.
 */
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type IConfigFile,
} from '@microsoft/api-extractor';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { builtEntryPoints, ROOT } from './lib/built-package';

export const REPORT_FOLDER = path.join(ROOT, 'api-reports');

/** `retrysafe/worker` → `retrysafe-worker`: the report's file name, without `.api.md`. */
export function reportName(entryPoint: string): string {
  return entryPoint.replace(/\//g, '-');
}

function configFor(name: string, types: string): IConfigFile {
  return {
    projectFolder: ROOT,
    mainEntryPointFilePath: types,
    // Only the entry point's declarations and what they import: the sources are not compiled again.
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'commonjs',
          moduleResolution: 'node',
          lib: ['ES2022'],
          types: ['node'],
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
        },
        files: [types],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: reportName(name),
      reportFolder: REPORT_FOLDER,
      reportTempFolder: path.join(ROOT, '.out/api-reports'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        // A type an export refers to without exporting it is listed in the report (TypeDoc's validation fails on
        // it in `npm run docs:api`); release tags (@public, @beta) are not used here.
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        'ae-undocumented': { logLevel: ExtractorLogLevel.None },
      },
      // The doc comments are TypeDoc's, checked by `npm run docs:api`.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

function main(): void {
  const check = process.argv.includes('--check');
  mkdirSync(REPORT_FOLDER, { recursive: true });
  const changed: string[] = [];
  let failed = false;
  const entries = builtEntryPoints();
  const configs = entries.map((entry) =>
    ExtractorConfig.prepare({
      configObject: configFor(entry.name, entry.types),
      configObjectFullPath: undefined,
      packageJsonFullPath: path.join(ROOT, 'package.json'),
    }),
  );
  // One TypeScript program for every entry point: they share most of their declarations, and each program of its
  // own took about 3 s on 2 cores.
  const compilerState = CompilerState.create(configs[0]!, {
    additionalEntryPoints: entries.map((entry) => entry.types),
  });
  for (const [index, entry] of entries.entries()) {
    const result = Extractor.invoke(configs[index]!, {
      compilerState,
      localBuild: !check,
      messageCallback: (message) => {
        // The report's own "you have changed the API" warning is said once, below, for every entry point.
        const reportNotice = /^console-api-report-(changed|copied|created)$/.test(message.messageId);
        if (reportNotice || message.logLevel === ExtractorLogLevel.Info) message.handled = true;
      },
    });
    if (result.apiReportChanged) changed.push(`${entry.name}: api-reports/${reportName(entry.name)}.api.md`);
    if (result.errorCount > 0 || result.warningCount > 0) failed = true;
  }
  if (check && changed.length) {
    process.stderr.write(
      `The public surface differs from its API report:\n  ${changed.join('\n  ')}\n` +
        'Run `npm run api:report`, read the diff of api-reports/, and commit it with the change.\n',
    );
    process.exitCode = 1;
  } else if (!check && changed.length) {
    process.stderr.write(`API reports updated:\n  ${changed.join('\n  ')}\n`);
  }
  if (failed) process.exitCode = 1;
}

if (require.main === module) main();
