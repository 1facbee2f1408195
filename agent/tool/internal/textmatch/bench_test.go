package textmatch

import (
	"fmt"
	"strings"
	"testing"
)

// tenThousandLines is a Go-like file of 10,000 lines, each distinct.
func tenThousandLines() string {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := range (10000 - 2) / 5 {
		fmt.Fprintf(&b, "func f%d(x int) int {\n\ty := x * %d\n\treturn y + %d\n}\n\n", i, i, i)
	}
	return b.String()
}

// BenchmarkEditMatch measures finding and applying one edit in a
// 10,000-line file, for each way the edit can be found, and the search for
// the closest region when it cannot.
func BenchmarkEditMatch(b *testing.B) {
	text := tenThousandLines()
	cases := []struct{ name, old string }{
		{"exact", "func f1990(x int) int {\n\ty := x * 1990\n"},
		{"trailing-whitespace", "func f1990(x int) int {   \n\ty := x * 1990  \n"},
		{"indentation", "    y := x * 1990\n    return y + 1990\n"},
		{"escaped", `func f1990(x int) int {\n\ty := x * 1990`},
		{"block-anchors", "func f1990(x int) int {\n\ty := x*1990\n\treturn y+1990\n}"},
		{"not-found", "func f1990(x int) int {\n\tz := x / 1990\n\treturn nothing\n\t// gone\n}"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_, err := Apply(text, c.old, "changed\n", false)
				if c.name == "not-found" {
					if _, _, ok := ClosestRegion(text, c.old); !ok {
						b.Fatal("no closest region")
					}
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
