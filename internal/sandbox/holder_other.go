//go:build !linux

package sandbox

// holderPool is Linux's (holder_linux.go): elsewhere there is none.
type holderPool struct{}

func (*holderPool) close() {}

// pidNS is Linux's (pidns_linux.go): elsewhere there is none.
type pidNS struct{}

func (*pidNS) close() {}

// missingWalls is Linux's: the walls it names are Linux's.
func missingWalls(capabilities) (missing, why []string) { return nil, nil }

// alive is Linux's: elsewhere commands run in no PID namespace darman
// can count.
func (capabilities) alive() (int, bool) { return 0, false }
