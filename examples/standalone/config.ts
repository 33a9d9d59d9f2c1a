import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * Digits past about 1.8e308 read as Infinity: said here, naming the setting, rather than by whatever
 * later refuses (or, unbounded, takes) an endless value.
 */
const tooLarge = 'must be a number small enough to represent (below about 1.8e308)';

/** `burst/perSecond`, e.g. `10/2`: a limit that lets at least one request through, now and again later. */
const rateLimit = z
  .string()
  .regex(/^\d+(\.\d+)?\/\d+(\.\d+)?$/, 'must be "<burst>/<per second>", e.g. "10/2"')
  .transform((value) => {
    const [burst, perSecond] = value.split('/').map(Number);
    return { burst: burst ?? 0, perSecond: perSecond ?? 0 };
  })
  .refine(({ burst, perSecond }) => Number.isFinite(burst) && Number.isFinite(perSecond), {
    message: tooLarge,
  })
  .refine(({ burst, perSecond }) => burst >= 1 && perSecond > 0, {
    message: 'must let requests through: a burst of at least 1 and more than 0 per second',
  });

/** The longest a Node.js timer waits (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
const longestTimerMs = 2_147_483_647;

/** Unset and empty read alike: a shell's `PORT=` or an empty entry of an env file sets nothing. */
const blankAsUnset = (value: unknown): unknown => (value === '' ? undefined : value);

/**
 * A URL the service calls: `http:` or `https:` only, so that `localhost:3000/api/` (the scheme left
 * off, read as a scheme `localhost:`) is refused at the start rather than failing every call.
 */
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http: or https: URL' });

/**
 * A number written in decimal digits, with a fraction when `fraction`: `0x1E` or `3e1` would be a
 * value the operator did not write, as for {@link port}.
 */
const decimal = (fraction: boolean) =>
  z
    .string()
    .trim()
    .regex(
      fraction ? /^\d+(\.\d+)?$/ : /^\d+$/,
      fraction
        ? 'must be a number in decimal digits, e.g. 30 or 0.5'
        : 'must be a whole number in decimal digits',
    )
    .transform(Number)
    .refine(Number.isFinite, tooLarge);

const milliseconds = () =>
  z.preprocess(
    blankAsUnset,
    decimal(false)
      .pipe(
        z
          .number()
          .min(1)
          .max(
            longestTimerMs,
            `must be at most ${longestTimerMs} (about 24.8 days, the longest a timer waits)`,
          ),
      )
      .optional(),
  );

/** A port in decimal digits: `0x1004` or `1e3` would listen somewhere the operator did not write. */
const port = z.preprocess(
  blankAsUnset,
  z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number from 0 to 65535, in decimal digits')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number from 0 to 65535, in decimal digits'))
    .default(3000),
);

const isAddressOrRange = (entry: string): boolean =>
  ipaddr.IPv4.isValidFourPartDecimal(entry) ||
  ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) ||
  ipaddr.IPv6.isValid(entry) ||
  ipaddr.IPv6.isValidCIDR(entry);

/** A hop count (`1`) or a comma-separated list of addresses and CIDR ranges; empty or unset trusts no proxy. */
const trustProxy = z
  .string()
  .optional()
  .transform((value, context): number | string[] | undefined => {
    const trimmed = value?.trim() ?? '';
    if (trimmed === '') return undefined;
    if (/^\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return Number(trimmed);
    const entries = trimmed.split(',').map((entry) => entry.trim());
    const wrong = entries.filter((entry) => !isAddressOrRange(entry));
    if (wrong.length === 0) return entries;
    context.addIssue({
      code: 'custom',
      message: `must be a hop count or a comma-separated list of IP addresses and CIDR ranges; not ${wrong.map((entry) => JSON.stringify(entry)).join(', ')}`,
    });
    return z.NEVER;
  });

/**
 * `*` or `true`, or host names separated by commas (`inbox.example.com,inbox.internal`); the inbox
 * itself checks each name. `true` is the library's own word for any (`allowedHosts: true`), so a
 * host of that name is never what the operator meant.
 */
const inboxHosts = z
  .string()
  .transform((value): true | string[] =>
    ['*', 'true'].includes(value.trim()) ? true : value.split(',').map((name) => name.trim()),
  );

const environmentSchema = z
  .object({
    PORT: port,
    // Set to nothing, these do not fall back to their default: an empty HOST listens on every
    // address (IPv6 too), and an empty store, seed or prefix, likely a variable missing from a
    // template, must not run a deployment on memory, on the demo organization's public keys, or on
    // the keys of another deployment.
    HOST: z.string().default('0.0.0.0'),
    NOTIFY_STORAGE: z
      .string()
      .min(1, 'must not be empty: "memory", a redis:// URL or a mongodb:// URL (unset, memory)')
      .default('memory'),
    NOTIFY_SEED: z
      .string()
      .min(1, 'must name a seed file (unset, the demo organization is seeded)')
      .optional(),
    NOTIFY_REDIS_PREFIX: z.string().min(1, 'must not be empty (unset, chat-notify:)').default('chat-notify:'),
    NOTIFY_RATE_LIMIT_PER_KEY: z.preprocess(blankAsUnset, rateLimit.prefault('10/2')),
    NOTIFY_RATE_LIMIT_PER_ORGANIZATION: z.preprocess(blankAsUnset, rateLimit.prefault('50/5')),
    NOTIFY_RATE_LIMIT_KEY_CREATION: z.preprocess(blankAsUnset, rateLimit.optional()),
    LOG_LEVEL: z.preprocess(
      blankAsUnset,
      z
        .enum(['debug', 'info', 'warn', 'error'], { error: 'must be debug, info, warn or error' })
        .default('info'),
    ),
    NOTIFY_ALLOW_INSECURE_CALLBACKS: z
      .enum(['0', '1', 'true', 'false', ''])
      .default('0')
      .transform((value) => value === '1' || value === 'true'),
    NOTIFY_TRUST_PROXY: trustProxy,
    SLACK_SIGNING_SECRET: z.preprocess(blankAsUnset, z.string().optional()),
    SLACK_API_URL: z.preprocess(blankAsUnset, httpUrl.optional()),
    TEAMS_APP_ID: z.preprocess(blankAsUnset, z.string().optional()),
    TEAMS_APP_PASSWORD: z.preprocess(blankAsUnset, z.string().optional()),
    TEAMS_TENANT_ID: z.preprocess(blankAsUnset, z.string().optional()),
    TEAMS_AUTHORITY: z.preprocess(blankAsUnset, httpUrl.optional()),
    TEAMS_TOKEN_ENDPOINT: z.preprocess(blankAsUnset, httpUrl.optional()),
    NOTIFY_INBOX: z
      .enum(['0', '1', 'true', 'false', ''])
      .optional()
      .transform((value) =>
        value === undefined || value === '' ? undefined : value === '1' || value === 'true',
      ),
    /** Host names the local inbox answers besides localhost and IP addresses, or `*` (`true`) for any. */
    NOTIFY_INBOX_HOSTS: z.preprocess(blankAsUnset, inboxHosts.optional()),
    /** Seconds to wait for storage at start-up; unset waits as long as it takes. */
    NOTIFY_WAIT_FOR_STORAGE: z.preprocess(blankAsUnset, decimal(true).optional()),
    /** Days a finished send stays readable (fractions allowed, e.g. `0.0001` in load tests). */
    NOTIFY_RETENTION_DAYS: z.preprocess(
      blankAsUnset,
      decimal(true)
        .pipe(z.number().positive('must be more than 0').max(36_500, 'must be at most 36500 (100 years)'))
        .default(30),
    ),
    /** Longer than a callback attempt may take (15 s, and up to 5 s for its DNS), which a stop lets finish. */
    NOTIFY_SHUTDOWN_TIMEOUT_MS: milliseconds().transform((value) => value ?? 25_000),
    NOTIFY_HEADERS_TIMEOUT_MS: milliseconds(),
    NOTIFY_REQUEST_TIMEOUT_MS: milliseconds().transform((value) => value ?? 30_000),
  })
  .refine(
    // MSAL, which gets the bot's tokens unless TEAMS_TOKEN_ENDPOINT does, refuses any other authority
    // at each token: the start would succeed and every send to Teams fail. Read as text, since this
    // runs on a TEAMS_AUTHORITY already refused as no URL too.
    (config) => config.TEAMS_TOKEN_ENDPOINT !== undefined || !/^http:/i.test(config.TEAMS_AUTHORITY ?? ''),
    {
      path: ['TEAMS_AUTHORITY'],
      message:
        'must be an https: URL unless TEAMS_TOKEN_ENDPOINT is set: without it the bot gets its tokens from MSAL, which accepts only https: authorities',
    },
  )
  .refine(
    (config) =>
      config.NOTIFY_HEADERS_TIMEOUT_MS === undefined ||
      config.NOTIFY_HEADERS_TIMEOUT_MS <= config.NOTIFY_REQUEST_TIMEOUT_MS,
    {
      path: ['NOTIFY_HEADERS_TIMEOUT_MS'],
      message: 'must not be more than NOTIFY_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    },
  )
  // Unset, the headers get 30 s, or the whole request's time when that is shorter.
  .transform((config) => ({
    ...config,
    NOTIFY_HEADERS_TIMEOUT_MS:
      config.NOTIFY_HEADERS_TIMEOUT_MS ?? Math.min(30_000, config.NOTIFY_REQUEST_TIMEOUT_MS),
  }));

/** The prefixes of the settings' names: another variable of the kind is most likely misspelled. */
const settingPrefix = /^(NOTIFY|SLACK|TEAMS)_/;

/**
 * The settings, and variables of the kind that other parts of a deployment read: the API key a
 * client of the service takes from the same environment (`NOTIFY_API_KEY`, as the client's docs
 * suggest) is no misspelling.
 */
const settingNames = new Set([...Object.keys(environmentSchema.in.shape), 'NOTIFY_API_KEY']);

/** The standalone host's settings, read from the environment (README.md#the-standalone-service). */
export type StandaloneConfig = z.infer<typeof environmentSchema> & {
  /**
   * Variables named like settings (`NOTIFY_…`, `SLACK_…`, `TEAMS_…`) that are none, warned of at
   * start: `NOTIFY_STORGE` ignored in silence would run a deployment on memory.
   */
  unreadVariables: string[];
};

/** Reads and checks the environment; a wrong value stops the start with a message that names it. */
export function readConfig(environment: NodeJS.ProcessEnv): StandaloneConfig {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) throw new Error(`Invalid environment: ${z.prettifyError(parsed.error)}`);
  const unreadVariables = Object.keys(environment)
    .filter((name) => settingPrefix.test(name) && !settingNames.has(name))
    .sort();
  return { ...parsed.data, unreadVariables };
}
