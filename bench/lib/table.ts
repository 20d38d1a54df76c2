/** Render rows as a plain-text table (first row = header), columns padded; numbers right-aligned. */
export function renderTable(
  rows: ReadonlyArray<ReadonlyArray<string>>,
  rightAlign: ReadonlyArray<boolean> = [],
): string {
  const widths: number[] = []
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (rightAlign[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd()
  const out: string[] = []
  rows.forEach((r, i) => {
    out.push(line(r))
    if (i === 0) out.push(widths.map((w) => '-'.repeat(w)).join('  '))
  })
  return out.join('\n')
}
