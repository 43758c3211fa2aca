/** Edit distance, ignoring case: how a misspelt name is matched to the one it was meant to be. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known name nearest to one a person wrote. */
export function closest(name: string, known: readonly string[]): string {
  return [...known].sort((x, y) => distance(name, x) - distance(name, y))[0]!;
}
