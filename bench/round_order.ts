/**
 * The order of the contestants in each round of an interleaved bench. On one LocalCluster the
 * later contestants of a run are slower (kube-apiserver's and etcd's cost per object drifts up over
 * the run: 3.0 against 4.5 ms within an hour), so a plain rotation, which gives one contestant of
 * six two late positions in three rounds, leaves it the worse medians. Here each even round runs
 * the round before it backwards (a drift that is linear in time then costs every contestant the
 * same over the pair), and each new pair starts half-way round the list: in three rounds of six,
 * no contestant's positions add up to more than 2.5 above or below the mean, against 4.5 with the
 * rotation.
 *
 * @module
 */

/** The contestants in the order they run in `round` (1-based). */
export function roundOrder<T>(contestants: readonly T[], round: number): T[] {
  const pair = Math.floor((round - 1) / 2);
  const shift = (pair * Math.ceil(contestants.length / 2)) % Math.max(1, contestants.length);
  const order = contestants.map((_, index) => contestants[(index + shift) % contestants.length]);
  return round % 2 === 0 ? order.reverse() : order;
}
