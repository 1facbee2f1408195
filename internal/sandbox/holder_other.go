//go:build !linux

package sandbox

// holderPool is Linux's (holder_linux.go): elsewhere there is none.
type holderPool struct{}

func (*holderPool) close() {}
