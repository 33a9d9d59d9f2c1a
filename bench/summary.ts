/**
 * The head of `bench/report.md`: each figure the performance targets name, read from the
 * benchmarks' structured figures, next to its aim. Figures are printed, not judged: a benchmark that
 * left no figure shows "not measured".
 */
import { z } from 'zod';

const load = z.object({ requestsPerSecond: z.number(), p99Ms: z.number() });
const hostFigures = z.object({
  'send share of bare': z.number(),
  'status share of bare': z.number(),
  'library send': load,
  'library status': load,
});
const httpFigures = z.object({
  results: z.object({
    express: hostFigures.optional(),
    koa: hostFigures.optional(),
    redis: z.object({ 'send share of memory': z.number(), 'status share of memory': z.number() }).optional(),
  }),
  growth: z.record(z.string(), z.object({ send: load, status: load })).optional(),
});
const roundTripFigures = z.object({
  operations: z.record(z.string(), z.object({ roundTrips: z.number() })),
});
const scale = z.object({
  pending: z.number(),
  due: z.number(),
  bytesPerRequest: z.number(),
  expiriesPerSecond: z.number(),
});
const pendingFigures = z.object({
  memory: z.array(scale),
  redis: z.array(scale),
  slack: z.object({ pending: z.number(), bytesPerRequest: z.number() }).optional(),
  slackOnRedis: z.object({ pending: z.number(), bytesPerRequest: z.number() }).optional(),
  teams: z
    .object({ pending: z.number(), bytesPerRequest: z.number(), keysPerRequest: z.number() })
    .optional(),
});
const retentionFigures = z.object({ bytesPerSend: z.number(), sends: z.number() });
const standaloneFigures = z.object({
  bytesPerSend: z.number(),
  lowestMiB: z.number(),
  highestMiB: z.number(),
  sends: z.number(),
});
const fanOutFigures = z.object({ ratio: z.number(), singleMs: z.number(), fiftyMs: z.number() });

/** One row: what is measured, the figure, the aim. */
type Row = [string, string, string];

const share = (value: number | undefined): string =>
  value === undefined ? 'not measured' : value.toFixed(2);

function httpRows(figures: unknown): Row[] {
  const parsed = httpFigures.safeParse(figures);
  const results = parsed.success ? parsed.data.results : undefined;
  const rows: Row[] = [];
  for (const [host, sendAim, statusAim] of [
    ['Express', '≥ 0.8', '≥ 0.9'],
    ['Koa', '≥ 0.7', '≥ 0.8'],
  ] as const) {
    const measured = host === 'Express' ? results?.express : results?.koa;
    const p99 = (path: 'send' | 'status'): string =>
      measured ? ` (p99 ${measured[`library ${path}`].p99Ms} ms)` : '';
    rows.push([
      `HTTP send, share of bare ${host}`,
      `${share(measured?.['send share of bare'])}${p99('send')}`,
      sendAim,
    ]);
    rows.push([
      `HTTP status read, share of bare ${host}`,
      `${share(measured?.['status share of bare'])}${p99('status')}`,
      statusAim,
    ]);
  }
  rows.push([
    'Throughput on Redis, share of memory (Express: send / status)',
    `${share(results?.redis?.['send share of memory'])} / ${share(results?.redis?.['status share of memory'])}`,
    'reported',
  ]);
  const growth = parsed.success ? parsed.data.growth : undefined;
  if (growth) {
    const sizes = Object.keys(growth).sort((a, b) => Number(a) - Number(b));
    const first = growth[sizes[0] ?? ''];
    const last = growth[sizes.at(-1) ?? ''];
    if (first && last && sizes.length > 1) {
      rows.push([
        `HTTP with ${Number(sizes.at(-1)).toLocaleString('en')} requests stored, share of empty (send / status)`,
        `${share(last.send.requestsPerSecond / first.send.requestsPerSecond)} / ${share(last.status.requestsPerSecond / first.status.requestsPerSecond)}`,
        'flat',
      ]);
    }
  }
  return rows;
}

function roundTripRows(figures: unknown): Row[] {
  const parsed = roundTripFigures.safeParse(figures);
  const operations = parsed.success ? parsed.data.operations : {};
  return Object.entries(operations).map(
    ([name, { roundTrips }]): Row => [
      `Redis round trips: ${name}`,
      String(roundTrips),
      name.startsWith('status')
        ? '1'
        : name.includes('Idempotency-Key')
          ? '≤ 3 with the inbox, + 1 storing the answer'
          : '≤ 3 with the inbox',
    ],
  );
}

/**
 * The runs of `bench/pending-scale.ts` on memory with the larger young generations that
 * docs/performance.md suggests to operators with many pending requests: their id among the
 * figures, and Node's flag.
 */
export const youngGenerationRuns = {
  tuned: { id: 'pending-scale-tuned', flag: '--max-semi-space-size=64' },
  large: { id: 'pending-scale-large-young', flag: '--max-semi-space-size=256' },
} as const;

/** A run of the memory figures with a larger young generation, and its flag. */
interface TunedRun {
  flag: string;
  figures: unknown;
}

/** @param tuned runs shown beside the default's figures for the largest number pending, where present. */
function pendingRows(figures: unknown, tuned: readonly TunedRun[]): Row[] {
  const parsed = pendingFigures.safeParse(figures);
  if (!parsed.success) return [['Pending requests: bytes and expiries', 'not measured', '']];
  const { slack, slackOnRedis, teams } = parsed.data;
  const teamsRows: Row[] =
    teams === undefined
      ? []
      : [
          [
            `Bytes per pending request, Redis, copies on Teams (a fake Bot Connector), ${teams.pending.toLocaleString('en')} pending`,
            `${teams.bytesPerRequest.toFixed(0)} (${teams.keysPerRequest.toFixed(1)} keys)`,
            'reported',
          ],
        ];
  const slackRows = (['memory', 'Redis'] as const).flatMap((store): Row[] => {
    const scale = store === 'memory' ? slack : slackOnRedis;
    return scale === undefined
      ? []
      : [
          [
            `Bytes per pending request, ${store}, copies on Slack (a fake Web API), ${scale.pending.toLocaleString('en')} pending`,
            scale.bytesPerRequest.toFixed(0),
            '< 1,024',
          ],
        ];
  });
  const storeRows = (['memory', 'redis'] as const).flatMap((store): Row[] => {
    const sizes = parsed.data[store];
    // The aims are for the largest number pending, with up to 100,000 of them falling due at once.
    const largest = sizes.at(-1);
    if (!largest) return [];
    const alongside =
      store === 'memory'
        ? tuned.flatMap(({ flag, figures: run }) => {
            const scale = pendingFigures.safeParse(run).data?.memory.at(-1);
            return scale?.pending === largest.pending
              ? [`${scale.expiriesPerSecond.toFixed(0)} with ${flag}`]
              : [];
          })
        : [];
    return [
      [
        `Bytes per pending request, ${store}, ${largest.pending.toLocaleString('en')} pending`,
        largest.bytesPerRequest.toFixed(0),
        '< 1,024',
      ],
      [
        `Expiries per second, ${store}, ${largest.due.toLocaleString('en')} due at once among ${largest.pending.toLocaleString('en')} pending`,
        `${largest.expiriesPerSecond.toFixed(0)}${alongside.length > 0 ? ` (${alongside.join('; ')})` : ''}`,
        store === 'memory' ? '≥ 20,000' : '≥ 5,000',
      ],
    ];
  });
  return [...storeRows, ...slackRows, ...teamsRows];
}

function retentionRows(figures: unknown): Row[] {
  const parsed = retentionFigures.safeParse(figures);
  return [
    [
      parsed.success
        ? `Heap growth per send once the first sends expired (${parsed.data.sends.toLocaleString('en')} sends, in process)`
        : 'Heap growth per send after the first retention period',
      parsed.success ? `${parsed.data.bytesPerSend.toFixed(1)} bytes` : 'not measured',
      'flat (≈ 0)',
    ],
  ];
}

function standaloneRows(figures: unknown): Row[] {
  const parsed = standaloneFigures.safeParse(figures);
  return [
    [
      parsed.success
        ? `Standalone service over ${parsed.data.sends.toLocaleString('en')} sends: resident memory range, trend per send`
        : 'Standalone service: resident memory range, trend per send',
      parsed.success
        ? `${parsed.data.lowestMiB.toFixed(0)}–${parsed.data.highestMiB.toFixed(0)} MiB, ${parsed.data.bytesPerSend.toFixed(1)} bytes`
        : 'not measured',
      'flat (≈ 0)',
    ],
  ];
}

function fanOutRows(figures: unknown): Row[] {
  const parsed = fanOutFigures.safeParse(figures);
  return [
    [
      'Slack fan-out: 50 recipients vs 1 (fake Slack, 20 ms per call)',
      parsed.success
        ? `${parsed.data.ratio.toFixed(2)}× (${parsed.data.fiftyMs.toFixed(0)} vs ${parsed.data.singleMs.toFixed(0)} ms)`
        : 'not measured',
      '< 4×',
    ],
  ];
}

/** The summary table, from the figures each benchmark saved (by file name, or by its id when a file runs twice). */
export function targetSummary(figuresByFile: ReadonlyMap<string, unknown>): string[] {
  const rows = [
    ...httpRows(figuresByFile.get('http.ts')),
    ...roundTripRows(figuresByFile.get('redis-round-trips.ts')),
    ...retentionRows(figuresByFile.get('retention-memory.ts')),
    ...standaloneRows(figuresByFile.get('standalone-memory.ts')),
    ...pendingRows(
      figuresByFile.get('pending-scale.ts'),
      Object.values(youngGenerationRuns).map(({ id, flag }) => ({ flag, figures: figuresByFile.get(id) })),
    ),
    ...fanOutRows(figuresByFile.get('fan-out.ts')),
  ];
  return [
    '## Summary against the targets',
    '',
    '| figure | measured | aim |',
    '|---|---|---|',
    ...rows.map(([name, value, aim]) => `| ${name} | ${value} | ${aim} |`),
    '',
  ];
}
