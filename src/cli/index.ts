// owns: the operator CLI (`imgpipe <command>`): argv → command, usage on bad arguments (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EMAIL_RULE, isAcceptedEmail } from '../accounts/email.ts';
import { ConfigError, loadConfig, TIERS, type Tier } from '../config.ts';
import { serve } from '../main.ts';
import { SqliteInUseError } from '../serve-lock.ts';
import { CliError, createKey, migrate, revokeKey, showAccount } from './commands.ts';

const USAGE = `usage: imgpipe <command>

  serve                                   run the HTTP service (what npm start runs)
  migrate                                 create or upgrade the schema and exit
  keys create --email E --tier T          create the account if missing, set its tier, issue a new key
                                          (tiers: ${TIERS.join(', ')}); prints the key alone on stdout,
                                          and on stderr which active key it revoked
  keys revoke --email E                   revoke the account's active key
  accounts show --email E                 e-mail, tier, key state and usage this month

Configuration comes from the environment (see docs/configuration.md).`;

class UsageError extends Error {}

function emailAndTier(args: string[], needTier: boolean): { email: string; tier?: Tier } {
  let values: { email?: string; tier?: string };
  try {
    const options: ParseArgsConfig['options'] = { email: { type: 'string' } };
    if (needTier) options.tier = { type: 'string' };
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (!values.email || !isAcceptedEmail(values.email.trim())) throw new UsageError(`--email ${EMAIL_RULE}`);
  if (!needTier) return { email: values.email };
  if (!values.tier || !TIERS.includes(values.tier as Tier)) {
    throw new UsageError(`--tier must be one of ${TIERS.join(', ')}`);
  }
  return { email: values.email, tier: values.tier as Tier };
}

async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  const key = command === 'keys' || command === 'accounts' ? `${command} ${sub ?? ''}` : command;
  const args = command === 'keys' || command === 'accounts' ? rest : argv.slice(1);
  if (key === 'help' || key === '--help' || key === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  switch (key) {
    case 'serve':
      if (args.length > 0) throw new UsageError('serve takes no arguments');
      await serve(loadConfig());
      return -1;
    case 'migrate':
      if (args.length > 0) throw new UsageError('migrate takes no arguments');
      await migrate(loadConfig());
      return 0;
    case 'keys create': {
      const { email, tier } = emailAndTier(args, true);
      const { key: created, notices } = await createKey(loadConfig(), email, tier as Tier);
      for (const notice of notices) process.stderr.write(`imgpipe: ${notice}\n`);
      process.stdout.write(`${created}\n`);
      return 0;
    }
    case 'keys revoke': {
      const { email } = emailAndTier(args, false);
      process.stderr.write(`${await revokeKey(loadConfig(), email)}\n`);
      return 0;
    }
    case 'accounts show': {
      const { email } = emailAndTier(args, false);
      process.stdout.write(`${await showAccount(loadConfig(), email)}\n`);
      return 0;
    }
    default:
      throw new UsageError(
        command ? `unknown command "${[command, sub].filter(Boolean).join(' ')}"` : 'no command',
      );
  }
}

try {
  const code = await run(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`imgpipe: ${err.message}\n\n${USAGE}\n`);
    process.exitCode = 2;
  } else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    const config = loadConfig();
    process.stderr.write(
      `imgpipe: port ${config.port} on ${config.host} is already in use; stop the other process or set PORT\n`,
    );
    process.exitCode = 1;
  } else if (err instanceof SqliteInUseError) {
    process.stderr.write(`imgpipe: ${err.message}\n`);
    process.exitCode = 1;
  } else if (err instanceof CliError || err instanceof ConfigError) {
    process.stderr.write(`imgpipe: ${err.message}\n`);
    process.exitCode = err instanceof CliError ? err.exitCode : 2;
  } else {
    process.stderr.write(`imgpipe: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}
