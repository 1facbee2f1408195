// lineChanges counts the lines an edit added and removed, as a diff view
// would: the shortest edit script between the two texts' lines (Myers'
// O((N+M)·D) algorithm; only its length is needed). Past maxEdits the middle
// is counted as all removed and all added rather than spend more time.
export function lineChanges(oldText: string, newText: string, maxEdits = 1000): { added: number; removed: number } {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  if (n === 0 || m === 0) return { added: m, removed: n };
  const d = editDistance(a, b, start, n, m, maxEdits);
  if (d < 0) return { added: m, removed: n };
  return { added: (d + m - n) / 2, removed: (d - m + n) / 2 };
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

// editDistance is the number of inserted plus deleted lines turning
// a[off:off+n] into b[off:off+m], or -1 when it exceeds max.
function editDistance(a: string[], b: string[], off: number, n: number, m: number, max: number): number {
  const limit = Math.min(max, n + m);
  const v = new Int32Array(2 * limit + 3);
  const mid = limit + 1;
  v[mid + 1] = 0;
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[mid + k - 1] < v[mid + k + 1]) ? v[mid + k + 1] : v[mid + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[off + x] === b[off + y]) {
        x++;
        y++;
      }
      v[mid + k] = x;
      if (x >= n && y >= m) return d;
    }
  }
  return -1;
}
