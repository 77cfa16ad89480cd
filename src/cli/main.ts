/**
 * `baton`: the command line (`docs/cli.md`). `serve` runs the service; the
 * other commands talk to a server (`--url`/`--token`, or `BATON_URL` and
 * `BATON_TOKEN`), or, for `verify --data-dir`, read a data directory.
 *
 * @module
 */
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { serve } from '../server.js';
import { CliError, EXIT } from './errors.js';
import { exportCheckpoint, exportEvidence, importFile, IMPORT_FORMATS, rekey, tokenLine, type ImportFormat } from './transfer.js';
import { verify } from './verify.js';
import { Watcher } from './watch.js';

const EXPORT_FORMATS = [...IMPORT_FORMATS, 'resume-block'];

function program(): Command {
  const cli = new Command('baton').description('Checkpoints and handoffs for AI agents: run the service, verify audit chains, export evidence, import and watch checkpoint files.').exitOverride();
  const remote = (command: Command): Command =>
    command.option('--url <url>', 'the Baton server (default BATON_URL, else http://127.0.0.1:7070)').option('--token <token>', 'a bearer token (default BATON_TOKEN)');

  cli
    .command('serve')
    .description('Run the service (what npm start runs), configured by environment variables (docs/configuration.md).')
    .option('--enable-fault-injection', 'expose POST /v1/admin/faults for admins (rehearsing outages)')
    .action(async (options: { enableFaultInjection?: boolean }) => {
      await serve(options.enableFaultInjection ? ['--enable-fault-injection'] : []);
      // Serving until a signal stops the process.
      await new Promise(() => undefined);
    });

  remote(cli.command('verify [task]'))
    .description('Verify the audit chain of TASK, or of every task: exit 0 only when every chain holds, else name the first break.')
    .option('--data-dir <dir>', 'read this LMDB data directory instead of a server (no server may hold it for writing)')
    .option('--tenant <tenant>', 'the tenant, with --data-dir', 'default')
    .addOption(new Option('--key-file <file>', 'with --data-dir: the encryption key file of a store encrypted at rest').env('BATON_ENCRYPTION_KEY_FILE'))
    .action(async (task: string | undefined, options: { url?: string; token?: string; dataDir?: string; tenant: string; keyFile?: string }) => {
      process.exitCode = await verify(task, { ...options, ...(options.dataDir ? { dataDir: resolve(options.dataDir) } : {}) });
    });

  remote(cli.command('export <id>'))
    .description('Export TASK’s evidence bundle (--out FILE), or, with --format, the checkpoint ID in a format agents read.')
    .option('--out <file>', 'write here instead of stdout')
    .addOption(new Option('--format <format>', 'export the checkpoint ID in this format').choices(EXPORT_FORMATS))
    .action(async (id: string, options: { url?: string; token?: string; out?: string; format?: string }) => {
      if (options.format) await exportCheckpoint(id, options.format, options.out, options);
      else await exportEvidence(id, options.out, options);
    });

  remote(cli.command('import <file>'))
    .description('Import a checkpoint file as a new checkpoint (sending the same file again creates nothing new).')
    .addOption(new Option('--format <format>', 'the file’s format').choices([...IMPORT_FORMATS]).makeOptionMandatory())
    .option('--task <taskId>', 'the task, for formats whose documents name none')
    .option('--agent <agentId>', 'the writing agent, for documents that name none')
    .action(async (file: string, options: { url?: string; token?: string; format: ImportFormat; task?: string; agent?: string }) => {
      await importFile(file, { format: options.format, ...(options.task ? { taskId: options.task } : {}), ...(options.agent ? { agentId: options.agent } : {}) }, options);
    });

  remote(cli.command('watch <dir>'))
    .description('Keep the checkpoint files agents write in DIR (the four formats) in Baton as they change.')
    .option('--once', 'one pass, then exit')
    .option('--interval <ms>', 'how often DIR is looked at', (v) => Number(v), 1000)
    .option('--debounce <ms>', 'how long a file must stay unchanged before it is read', (v) => Number(v), 300)
    .option('--task <taskId>', 'the task of files that name none (default: the directory’s name)')
    .option('--agent <agentId>', 'the writing agent, for documents that name none')
    .action(async (dir: string, options: { url?: string; token?: string; once?: boolean; interval: number; debounce: number; task?: string; agent?: string }) => {
      const watcher = new Watcher(resolve(dir), {
        once: options.once === true,
        intervalMs: options.interval,
        debounceMs: options.debounce,
        ...(options.url ? { url: options.url } : {}),
        ...(options.token ? { token: options.token } : {}),
        ...(options.task ? { taskId: options.task } : {}),
        ...(options.agent ? { agentId: options.agent } : {}),
      });
      await watcher.run();
    });

  remote(cli.command('rekey')).description('Re-seal stored values with the newest encryption key (needs encryption at rest on the server).').action(async (options: { url?: string; token?: string }) => {
    await rekey(options);
  });

  const tokens = cli.command('tokens').description('Tokens for BATON_TOKENS_FILE.');
  tokens
    .command('hash <role> <token> [tenant]')
    .description('Print the BATON_TOKENS_FILE line of a token: role:sha256hex[:tenant] (the token itself is never stored).')
    .action((role: string, token: string, tenant: string | undefined) => {
      console.log(tokenLine(role, token, tenant));
    });
  return cli;
}

export async function run(argv: readonly string[]): Promise<void> {
  try {
    await program().parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with code 0; a wrong command line with 2.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (error instanceof CliError) {
      console.error(error.message);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
}
