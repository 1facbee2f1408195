package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/darman-dev/darman/internal/config"
)

func TestWebFetchKeys(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"webfetch": {"allowPrivate": true, "allow": ["intranet.example", "localhost:8080", "[::1]:8080", "10.1.2.3", "10.0.0.0/8"]}}`)
	c := f.mustLoad().Config
	if !c.WebFetch.AllowPrivate || !slices.Equal(c.WebFetch.Allow, []string{"intranet.example", "localhost:8080", "[::1]:8080", "10.1.2.3", "10.0.0.0/8"}) {
		t.Errorf("webfetch = %+v", c.WebFetch)
	}
	if d := newFixture(t).mustLoad().Config.WebFetch; d.AllowPrivate || len(d.Allow) != 0 {
		t.Errorf("default webfetch = %+v; want private addresses refused", d)
	}
}

func TestWebFetchAllowBadEntries(t *testing.T) {
	f := newFixture(t)
	f.write("darman.json", `{"webfetch": {"allow": ["ok.example", "http://intranet/", "localhost:99999", "a b"]}}`)
	_, err := f.load()
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("err = %v; want three problems", err)
	}
	for i, p := range ce.Problems {
		if p.Path != "webfetch.allow["+string(rune('1'+i))+"]" || !strings.Contains(p.Message, "expected a host name, host:port, address or CIDR range") {
			t.Errorf("problem %d = %+v", i, p)
		}
	}
}
