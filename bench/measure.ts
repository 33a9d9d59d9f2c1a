/** Operations per second of `operation`, run `iterations` times after a warm-up of a tenth as many. */
export async function opsPerSecond(iterations: number, operation: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.ceil(iterations / 10); i += 1) await operation(i);
  const start = performance.now();
  for (let i = 0; i < iterations; i += 1) await operation(i);
  return (iterations / (performance.now() - start)) * 1000;
}

/** One line of a results table. */
export function report(name: string, value: number, baseline: number): void {
  const ratio = baseline / value;
  console.log(
    `${name.padEnd(58)} ${value.toFixed(0).padStart(10)} ops/s   ${ratio.toFixed(2).padStart(7)}x baseline time`,
  );
}
