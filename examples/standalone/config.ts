import { z } from 'zod';

/** `burst/perSecond`, e.g. `10/2`. */
const rateLimit = z
  .string()
  .regex(/^\d+(\.\d+)?\/\d+(\.\d+)?$/, 'must be "<burst>/<per second>", e.g. "10/2"')
  .transform((value) => {
    const [burst, perSecond] = value.split('/').map(Number);
    return { burst: burst ?? 0, perSecond: perSecond ?? 0 };
  });

const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  NOTIFY_STORAGE: z.string().default('memory'),
  NOTIFY_SEED: z.string().optional(),
  NOTIFY_REDIS_PREFIX: z.string().min(1).default('chat-notify:'),
  NOTIFY_RATE_LIMIT_PER_KEY: rateLimit.prefault('10/2'),
  NOTIFY_RATE_LIMIT_PER_ORGANIZATION: rateLimit.prefault('50/5'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  NOTIFY_ALLOW_INSECURE_CALLBACKS: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('0')
    .transform((value) => value === '1' || value === 'true'),
});

/** The standalone host's settings, read from the environment (DECISIONS §9). */
export type StandaloneConfig = z.infer<typeof environmentSchema>;

/** Reads and checks the environment; a wrong value stops the start with a message that names it. */
export function readConfig(environment: NodeJS.ProcessEnv): StandaloneConfig {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) throw new Error(`Invalid environment: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
