package server

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// apiModule writes a package whose API has every kind the tool lists:
// documented and undocumented functions, a struct with exported and
// unexported fields, methods on exported and unexported types, a
// constant block, a test file and a file no server reads.
func apiModule(t *testing.T) string {
	root := goModule(t)
	writeFile(t, filepath.Join(root, "shop", "price.go"), `package shop

// Cart holds what a customer buys. It is not safe for concurrent use.
type Cart struct {
	// Items are the prices in cents.
	Items []int `+"`json:\"items\"`"+`
	owner string
	// Coupon is the code given at checkout, if any.
	Coupon   string
	Discount int
}

// Total is the sum of the items, with tax.
func (c *Cart) Total() int {
	t := 0
	for _, i := range c.Items {
		t += WithTax(i)
	}
	return t
}

func (c *Cart) reset() { c.Items = nil }

// WithTax adds the tax to cents.
//
// It rounds to the nearest cent.
func WithTax(cents int) int { return cents * 6 / 5 }

func helper() {}

type ledger struct{}

// Add is exported on an unexported type: not the package's API.
func (ledger) Add() {}

// Rates of tax.
const (
	// Standard is the usual rate.
	Standard = 20
	reduced  = 5
)
`)
	writeFile(t, filepath.Join(root, "shop", "price_test.go"), "package shop\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {}\n")
	writeFile(t, filepath.Join(root, "shop", "README.md"), "# shop\n")
	return root
}

// TestPackageAPIAgainstGopls: a package's exported API in one answer,
// from gopls's outline of each file: signatures and each doc comment's
// first sentence, exported fields under their type, nothing unexported,
// no test file unless asked; a small limit drops docs, then members, then
// declarations (types and functions kept), and says what it dropped and
// the limit that lists it all.
func TestPackageAPIAgainstGopls(t *testing.T) {
	root := apiModule(t)
	_, cs := connect(t, root)

	text, isErr := call(t, cs, "package_api", map[string]any{"path": "shop"}, nil)
	want := `shop: 7 exported declarations in 1 file
price.go
4 type Cart struct // holds what a customer buys.
  6 Items []int // are the prices in cents.
  9 Coupon string // is the code given at checkout, if any.
  10 Discount int
14 func (c *Cart) Total() int // is the sum of the items, with tax.
27 func WithTax(cents int) int // adds the tax to cents.
39 Standard = 20 // is the usual rate.
not listed: 1 test file (tests: true)`
	if isErr || text != want {
		t.Fatalf("package_api shop =\n%s\nwant\n%s", text, want)
	}
	// A file names its package; tests come when asked.
	text, isErr = call(t, cs, "package_api", map[string]any{"path": "shop/price.go", "tests": true}, nil)
	if isErr || !strings.Contains(text, "price_test.go\n5 func TestTotal(t *testing.T)") || strings.Contains(text, "not listed") {
		t.Errorf("package_api shop/price.go with tests =\n%s", text)
	}

	for _, c := range []struct {
		limit int
		want  string
	}{
		{350, `shop: 7 exported declarations in 1 file
price.go
4 type Cart struct
  6 Items []int
  9 Coupon string
  10 Discount int
14 func (c *Cart) Total() int
27 func WithTax(cents int) int
39 Standard = 20
not listed: docs (limit `},
		{260, `shop: 7 exported declarations in 1 file
price.go
4 type Cart struct
14 func (c *Cart) Total() int
27 func WithTax(cents int) int
39 Standard = 20
not listed: docs, 3 members of types (limit `},
		{215, `shop: 7 exported declarations in 1 file
price.go
4 type Cart struct
14 func (c *Cart) Total() int
not listed: docs, 3 members of types, 2 declarations (limit `},
	} {
		text, isErr := call(t, cs, "package_api", map[string]any{"path": "shop", "limit": c.limit}, nil)
		if isErr || !strings.HasPrefix(text, c.want) || len(text) > c.limit {
			t.Errorf("package_api limit %d (%d bytes) =\n%s\nwant it to start with\n%s", c.limit, len(text), text, c.want)
		}
		// The note's limit lists it all.
		m := regexp.MustCompile(`limit (\d+) lists all`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("package_api limit %d says no limit that lists all:\n%s", c.limit, text)
		}
		all, _ := strconv.Atoi(m[1])
		if text, _ := call(t, cs, "package_api", map[string]any{"path": "shop", "limit": all}, nil); text != want {
			t.Errorf("package_api limit %d (from the note) =\n%s\nwant\n%s", all, text, want)
		}
	}
	if text, isErr := call(t, cs, "package_api", map[string]any{"path": "nowhere"}, nil); !isErr || !strings.Contains(text, "MCP-INVALID-INPUT") {
		t.Errorf("package_api of a missing directory = %q (isError %v)", text, isErr)
	}
}

// TestPackageAPISeesAChangedFile: package_api asks again the outline of
// a file changed since the last answer (the servers' outlines of
// unchanged files are kept), on disk or in an unsaved buffer.
func TestPackageAPISeesAChangedFile(t *testing.T) {
	root := apiModule(t)
	srv, cs := connect(t, root)
	if text, isErr := call(t, cs, "package_api", map[string]any{"path": "shop"}, nil); isErr || strings.Contains(text, "Refund") {
		t.Fatalf("package_api shop =\n%s", text)
	}
	file := filepath.Join(root, "shop", "refund.go")
	writeFile(t, file, "package shop\n\n// Refund gives the cents back.\nfunc Refund(cents int) int { return -cents }\n")
	text, isErr := call(t, cs, "package_api", map[string]any{"path": "shop"}, nil)
	if isErr || !strings.Contains(text, "refund.go\n4 func Refund(cents int) int // gives the cents back.") {
		t.Fatalf("package_api after refund.go was written =\n%s", text)
	}
	writeFile(t, file, "package shop\n\n// Refund gives the cents back.\nfunc Refund(cents int) int { return -cents }\n\n// Credit keeps the cents.\nfunc Credit(cents int) int { return cents }\n")
	text, isErr = call(t, cs, "package_api", map[string]any{"path": "shop"}, nil)
	if isErr || !strings.Contains(text, "\n7 func Credit(cents int) int // keeps the cents.") {
		t.Fatalf("package_api after refund.go changed =\n%s", text)
	}
	err := srv.overlay.with(file, "package shop\n\n// Void cancels.\nfunc Void() {}\n", func() error {
		text, isErr = call(t, cs, "package_api", map[string]any{"path": "shop"}, nil)
		return nil
	})
	if err != nil || isErr || !strings.Contains(text, "refund.go\n4 func Void() // cancels.") || strings.Contains(text, "Credit") {
		t.Fatalf("package_api with refund.go overlaid =\n%s", text)
	}
}
