import { lookup } from 'node:dns/promises';

/** Host the SDK's own `cached-download` fetches dev and test servers from (sdk-core's ephemeral_server). */
export const SDK_DOWNLOAD_HOST = 'temporal.download';
const PROBE_TIMEOUT_MS = 3000;

/**
 * Why the SDK's own download cannot work here, or undefined when it may. Only DNS is asked: a machine that
 * cannot resolve the download host (like one that reaches package registries only) will not get the binary,
 * and resolving costs no traffic to the host itself.
 */
export async function probeSdkDownload(): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`resolving ${SDK_DOWNLOAD_HOST} timed out`), PROBE_TIMEOUT_MS);
  });
  const resolved = lookup(SDK_DOWNLOAD_HOST).then(
    () => undefined,
    (err: NodeJS.ErrnoException) =>
      `cannot resolve ${SDK_DOWNLOAD_HOST} (${err.code ?? err.message}; no internet access?)`,
  );
  try {
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
