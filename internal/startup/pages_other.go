//go:build !linux

package startup

// dropStartupPages does nothing outside Linux (see the Linux version).
func dropStartupPages() error { return nil }
