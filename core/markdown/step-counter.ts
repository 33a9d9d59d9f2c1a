/**
 * Counts the elementary steps of a parse: each character examined and each table entry filled is one.
 * A measure of cost that does not depend on the machine, so tests can check how it grows.
 */
export interface StepCounter {
  steps: number;
}
