package textdist_test

import (
	"testing"

	"github.com/darman-dev/darman/internal/textdist"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"apikey", "apiKey", 1},
		{"kitten", "sitting", 3},
		{"sitting", "kitten", 3},
		{"", "abc", 3},
		{"flaw", "lawn", 2},
	} {
		if got := textdist.Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
