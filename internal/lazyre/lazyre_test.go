package lazyre

import (
	"sync"
	"testing"
)

func TestCompiledOnceOnFirstUse(t *testing.T) {
	r := New(`^a(b+)$`)
	if r.re != nil {
		t.Fatal("compiled before use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if !r.MatchString("abb") || r.MatchString("ac") {
				t.Error("wrong match")
			}
		})
	}
	wg.Wait()
	if got := r.FindStringSubmatch("abbb"); len(got) != 2 || got[1] != "bbb" {
		t.Errorf("FindStringSubmatch = %q", got)
	}
	if got := r.ReplaceAllString("ab", "x"); got != "x" {
		t.Errorf("ReplaceAllString = %q", got)
	}
	if got := r.ReplaceAllStringFunc("abb", func(s string) string { return s + "!" }); got != "abb!" {
		t.Errorf("ReplaceAllStringFunc = %q", got)
	}
	if got := r.FindAllStringSubmatchIndex("ab", -1); len(got) != 1 {
		t.Errorf("FindAllStringSubmatchIndex = %v", got)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	New(`a(`)
	if err := Check(); err == nil {
		t.Fatal("Check passed an expression that does not compile")
	}
}
