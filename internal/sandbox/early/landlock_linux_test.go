//go:build linux

package early

import "testing"

// TestHandledFollowsTheKernelsABI: the ruleset handles every right the
// kernel's Landlock ABI knows, and none it does not (a kernel refuses a
// ruleset with rights it does not know): TCP from ABI 4, UDP from 10,
// scoping from 6, refer from 2, truncate from 3, ioctl on devices from 5,
// pathname Unix sockets from 9.
func TestHandledFollowsTheKernelsABI(t *testing.T) {
	for _, c := range []struct {
		abi            int
		fs, net, scope uint64
	}{
		{1, 1<<13 - 1, 0, 0},
		{2, 1<<14 - 1, 0, 0},
		{3, 1<<15 - 1, 0, 0},
		{4, 1<<15 - 1, 3, 0},
		{5, 1<<16 - 1, 3, 0},
		{6, 1<<16 - 1, 3, 3},
		{7, 1<<16 - 1, 3, 3},
		{8, 1<<16 - 1, 3, 3},
		{9, 1<<17 - 1, 3, 3},
		{10, 1<<17 - 1, 15, 3},
		{12, 1<<17 - 1, 15, 3},
	} {
		got := handled(c.abi)
		if got.handledFS != c.fs || got.handledNet != c.net || got.scoped != c.scope {
			t.Errorf("handled(%d) = %+v, want fs %#x net %#x scoped %#x", c.abi, got, c.fs, c.net, c.scope)
		}
	}
	if handled(7).handledFS&fsResolveUnix != 0 || handled(9).handledFS&fsResolveUnix == 0 {
		t.Error("pathname Unix sockets are handled from ABI 9 only")
	}
}
