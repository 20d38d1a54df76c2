/**
 * The loop of the in-process A/B scripts (`bench/ab-windowed.mts`, `bench/ab-processor.mts`): `pairs`
 * pairs of runs, tree A's and tree B's in turn, the order swapped every pair, so a change of the
 * machine's load falls on both. Prints each pair's rates and B/A, then the medians, the first pair
 * (warming up) left out.
 */
export async function abPairs(
  names: readonly [string, string],
  pairs: number,
  unit: string,
  label: string,
  run: (tree: 0 | 1) => Promise<number>,
): Promise<void> {
  const rates: [number[], number[]] = [[], []]
  const ratios: number[] = []
  for (let i = 0; i < pairs; i++) {
    const got = [0, 0]
    for (const j of i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) got[j] = await run(j)
    const [a, b] = got as [number, number]
    if (i > 0) {
      rates[0].push(a)
      rates[1].push(b)
      ratios.push(b / a)
    }
    console.log(`pair ${i + 1}: A ${Math.round(a)} B ${Math.round(b)} ${unit}, B/A ${(b / a).toFixed(3)}`)
  }
  console.log(
    `${label}A ${names[0]}: median ${Math.round(median(rates[0]))}; B ${names[1]}: median ${Math.round(median(rates[1]))}; median B/A ${median(ratios).toFixed(3)} (pairs 2-${pairs})`,
  )
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number
