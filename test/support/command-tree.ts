/**
 * Walks the `retrysafe` command tree the way a person does: `retrysafe --help`, then `--help` of every command its
 * "Commands:" list names, and of every command those lists name in turn. Runs each through `run` (the source under
 * tsx, or the installed package's bin), so the walk sees exactly what a user sees.
 */
export interface HelpAnswer {
  argv: string[];
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The command names under a help text's `Commands:` heading (commander's own `help` left out). */
export function commandsListed(help: string): string[] {
  const lines = help.split('\n');
  const start = lines.findIndex((l) => /^Commands:\s*$/.test(l));
  if (start === -1) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^ {2}([a-z][a-z-]*)\b/.exec(line);
    if (!m) {
      if (line.trim() === '') break;
      continue; // a description wrapped onto its own line
    }
    if (m[1] !== 'help') names.push(m[1]);
  }
  return names;
}

/** Every command's `--help`, the top level's first, each with its exit status and output. */
export async function walkHelp(run: (argv: string[]) => Promise<HelpAnswer>): Promise<HelpAnswer[]> {
  const answers: HelpAnswer[] = [];
  const visit = async (path: string[]) => {
    const answer = await run([...path, '--help']);
    answers.push(answer);
    await Promise.all(commandsListed(answer.stdout).map((name) => visit([...path, name])));
  };
  await visit([]);
  return answers;
}
